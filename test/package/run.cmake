# find_package(llmx) after `cmake --install`: installs the build tree into a scratch prefix, then
# configures, builds and runs a separate consumer project against it. Any failing step fails.
#
#   cmake -DSRC=<source dir> -DBUILD=<build dir> -DWORK=<scratch dir> -P run.cmake
foreach(var SRC BUILD WORK)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

string(RANDOM LENGTH 8 run)  # a run beside another one of the suite gets its own folder
set(WORK ${WORK}/${run})
set(PREFIX ${WORK}/prefix)
set(CONSUMER_BUILD ${WORK}/consumer-build)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK} ${WORK}/llmx-home)

# Runs one step; on failure prints its output and stops with FATAL_ERROR.
function(step name)
  message(STATUS "package test: ${name}")
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package test: ${name} failed (${rc})\n--- command: ${ARGN}\n--- stdout:\n${out}\n--- stderr:\n${err}")
  endif()
  set(STEP_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

step("install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX})
if(NOT EXISTS ${PREFIX}/include/llmx/actors/engine.hpp)
  message(FATAL_ERROR "package test: include/llmx/actors/engine.hpp was not installed under ${PREFIX}")
endif()
# The seed's binary name, a link to llmx, inside the prefix given at install time.
if(NOT IS_SYMLINK ${PREFIX}/bin/llmx-mcp-server)
  message(FATAL_ERROR "package test: bin/llmx-mcp-server (a link to llmx) was not installed under ${PREFIX}")
endif()
# The installed binary finds its installed engine (<libdir>/llmx/llmx-engine.so): it answers an
# initialize, then serves until stdin ends and exits 0.
file(WRITE ${WORK}/initialize.jsonl [=[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"package","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"ping"}
]=])
execute_process(COMMAND ${CMAKE_COMMAND} -E env LLMX_HOME=${WORK}/llmx-home HOME=${WORK}/llmx-home ${PREFIX}/bin/llmx-mcp-server
  INPUT_FILE ${WORK}/initialize.jsonl RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"id\":2")
  message(FATAL_ERROR "package test: the installed llmx-mcp-server did not serve (${rc})\n--- stdout:\n${out}\n--- stderr:\n${err}")
endif()
file(GLOB_RECURSE config_files ${PREFIX}/llmxConfig.cmake)
if(NOT config_files)
  message(FATAL_ERROR "package test: no llmxConfig.cmake was installed under ${PREFIX}")
endif()

# The consumer is built with the same compiler as llmx (read from the build's cache).
set(compiler_args)
if(EXISTS ${BUILD}/CMakeCache.txt)
  file(STRINGS ${BUILD}/CMakeCache.txt cxx REGEX "^CMAKE_CXX_COMPILER:FILEPATH=")
  if(cxx)
    string(REGEX REPLACE "^CMAKE_CXX_COMPILER:FILEPATH=" "" cxx "${cxx}")
    list(APPEND compiler_args -DCMAKE_CXX_COMPILER=${cxx})
  endif()
endif()

step("configure consumer" ${CMAKE_COMMAND} -S ${SRC}/test/package/consumer -B ${CONSUMER_BUILD}
  -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release ${compiler_args})
step("build consumer" ${CMAKE_COMMAND} --build ${CONSUMER_BUILD} -j 2)
step("run consumer" ${CMAKE_COMMAND} -E env LLMX_HOME=${WORK}/llmx-home LLMX_BASE_URL=http://127.0.0.1:9/v1
  ${CONSUMER_BUILD}/llmx_consumer)
if(NOT STEP_OUTPUT MATCHES "llmx consumer: OK")
  message(FATAL_ERROR "package test: unexpected consumer output:\n${STEP_OUTPUT}")
endif()
message(STATUS "package test: ${STEP_OUTPUT}")
file(REMOVE_RECURSE ${WORK})
