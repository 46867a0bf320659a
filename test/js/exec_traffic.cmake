# `llmx exec --json` against the exported ExecThreadEvent schema (issue 14): runs the exec
# integration tests with LLMX_EXEC_EVENTS_LOG (test/support/harness.cpp appends every --json
# stdout there), then exec_events.mjs validates those lines and its own scenarios' with ajv.
# Per run: another run of the suite beside this one writes its own file.
string(RANDOM LENGTH 8 run)
set(log ${JS_DIR}/exec_events.${run}.jsonl)
file(REMOVE ${log})
execute_process(COMMAND ${CMAKE_COMMAND} -E env LLMX_EXEC_EVENTS_LOG=${log} ${TESTS} "-tc=exec*"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the exec integration tests failed (${rc})")
endif()
execute_process(COMMAND ${NODE} ${JS_DIR}/exec_events.mjs --llmx ${LLMX} --mock-llm ${MOCK_LLM}
                        --fake-mcp ${FAKE_MCP} --log ${log}
                RESULT_VARIABLE rc)
file(REMOVE ${log})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exec --json lines do not match the exported schema (${rc})")
endif()
