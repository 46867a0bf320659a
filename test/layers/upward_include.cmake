# Layers as libraries (issue 12): a library sees only its own headers and those of the layers it
# links, so an upward #include does not build. Compiles one-line files with exactly the include
# roots a layer gets (build/layers/<target>) and expects the upward ones to fail.
#
#   cmake -DCXX=<compiler> -DLAYERS=<build>/layers -DWORK=<scratch dir> -P upward_include.cmake
file(MAKE_DIRECTORY ${WORK})
string(RANDOM LENGTH 8 run)
set(src ${WORK}/probe_${run}.cpp)

function(probe expect layer header)
  set(flags -std=c++20 -fsyntax-only)
  foreach(dep ${ARGN})
    list(APPEND flags -I${LAYERS}/${dep})
  endforeach()
  file(WRITE ${src} "#include \"${header}\"\n")
  execute_process(COMMAND ${CXX} ${flags} ${src} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(expect STREQUAL "builds" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${layer} cannot include its own or a lower layer's ${header}:\n${err}")
  elseif(expect STREQUAL "fails" AND rc EQUAL 0)
    message(FATAL_ERROR "${layer} can include ${header}, a layer above it")
  endif()
endfunction()

set(core llmx_core llmx_base)
set(sandbox llmx_sandbox llmx_config llmx_workspace llmx_store ${core})
set(transport llmx_transport llmx_model llmx_config llmx_store ${core})
probe(builds llmx_core protocol/core/events.hpp ${core})
probe(fails llmx_base protocol/core/events.hpp llmx_base)
probe(fails llmx_core protocol/config/config.hpp ${core})
probe(fails llmx_core actors/actors.hpp ${core})
probe(builds llmx_sandbox sandbox/process.hpp ${sandbox})
probe(fails llmx_sandbox transport/http_client.hpp ${sandbox})
probe(fails llmx_sandbox actors/actors.hpp ${sandbox})
probe(fails llmx_sandbox protocol/rpc/jsonrpc.hpp ${sandbox})
probe(fails llmx_transport sandbox/process.hpp ${transport})
probe(fails llmx_transport actors/actors.hpp ${transport})
file(REMOVE ${src})
