# Runs every integration test with LLMX_TRAFFIC_LOG / LLMX_MCP_TRAFFIC_LOG, exports the schema
# bundle with `llmx app-server generate-json-schema`, and validates every captured line with ajv:
# the app server's whole traffic, and the mcp-server's conversation methods and llmx/event
# notifications (--mcp: the MCP protocol's own messages are the SDK client test's business).
# Per run: another run of the suite beside this one writes its own files.
string(RANDOM LENGTH 8 run)
set(traffic ${JS_DIR}/app_server.${run}.traffic.jsonl)
set(mcp_traffic ${JS_DIR}/mcp_server.${run}.traffic.jsonl)
set(schema ${JS_DIR}/app_server_schema.${run})
file(REMOVE ${traffic} ${mcp_traffic})
file(REMOVE_RECURSE ${schema})
# Every suite that talks to a server over JSON-RPC: the integration tests without the ones that
# only run `llmx exec` (provider faults and dialects, exec, exec tools, settings), and the MCP
# client's (mcpToolCall items, mcp_* events) without its slowest cases.
set(suites "${TESTS}|-tce=faults*,dialects*,responses wire*,exec*,tools/exec*,settings*")
if(MCP_TESTS)
  list(APPEND suites "${MCP_TESTS}|-tce=*hung*,*50 MB*,*dies mid-call*,*times out*")
endif()
foreach(suite IN LISTS suites)
  string(REPLACE "|" ";" suite "${suite}")
  list(GET suite 0 binary)
  list(GET suite 1 filter)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LLMX_TRAFFIC_LOG=${traffic} LLMX_MCP_TRAFFIC_LOG=${mcp_traffic}
                          ${binary} "${filter}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${binary} failed (${rc})")
  endif()
endforeach()
execute_process(COMMAND ${LLMX} app-server generate-json-schema --out ${schema} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generate-json-schema failed (${rc})")
endif()
execute_process(COMMAND ${NODE} ${JS_DIR}/validate_traffic.mjs ${schema}/llmx_app_server_protocol.schemas.json
                        ${traffic} --trust-client
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "captured app-server traffic does not match the exported schema (${rc})")
endif()
execute_process(COMMAND ${NODE} ${JS_DIR}/validate_traffic.mjs ${schema}/llmx_app_server_protocol.schemas.json
                        ${mcp_traffic} --trust-client --mcp
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "captured mcp-server traffic does not match the exported schema (${rc})")
endif()
# The MCP protocol's own messages against the official schemas (2025-11-25, 2026-07-28).
execute_process(COMMAND ${NODE} ${JS_DIR}/validate_mcp_wire.mjs ${mcp_traffic} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "captured mcp-server traffic does not match the official MCP schemas (${rc})")
endif()
file(REMOVE ${traffic} ${mcp_traffic})
file(REMOVE_RECURSE ${schema})
