# Runs the app-server integration tests with LLMX_TRAFFIC_LOG, exports the schema bundle with
# `llmx app-server generate-json-schema`, and validates every captured line with ajv.
set(traffic ${JS_DIR}/app_server.traffic.jsonl)
set(schema ${JS_DIR}/app_server_schema)
file(REMOVE ${traffic})
file(REMOVE_RECURSE ${schema})
execute_process(COMMAND ${CMAKE_COMMAND} -E env LLMX_TRAFFIC_LOG=${traffic}
                        ${TESTS} "-tc=app-server*,200 conversations at once through one app-server*"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the app-server integration tests failed (${rc})")
endif()
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
