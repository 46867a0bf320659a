# Hermetic tests (issue 12): with HOME pointing at a folder whose login and shell profiles leave a
# mark, the suites that run commands (`bash -lc` of the model included) must leave none: every
# test process swaps in a scratch HOME of its own (test/support/scratch_home.hpp).
#
#   cmake -DUNIT=<unit tests> -DINTEGRATION=<integration tests> -DWORK=<scratch dir> -P ...
foreach(var UNIT INTEGRATION WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "profile_never_runs.cmake: -D${var}=... is required")
  endif()
endforeach()
string(RANDOM LENGTH 10 run)  # two runs of the suite side by side get folders of their own
set(WORK ${WORK}/${run})
set(home ${WORK}/home)
set(mark ${WORK}/marks)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${home} ${mark})
foreach(profile .profile .bashrc .bash_profile .bash_login .zshenv .zprofile)
  file(WRITE ${home}/${profile} "echo \"$$ $0\" >> '${mark}/${profile}'\n")
endforeach()

# Commands run by the model's shell tool (bash -lc), under approval and in the sandbox, and the
# unit suites that spawn processes directly.
execute_process(COMMAND ${CMAKE_COMMAND} -E env HOME=${home} ${INTEGRATION} "-tc=tools/exec*,tools/approval*,sandbox/turn*"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the command-running integration tests failed (${rc}):\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env HOME=${home} ${UNIT} "-tc=process*,account*,sandbox*"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the command-running unit tests failed (${rc}):\n${out}")
endif()

file(GLOB marks ${mark}/*)
if(marks)
  list(GET marks 0 first)
  file(READ ${first} text)
  message(FATAL_ERROR "a test ran a profile of HOME (${marks}):\n${text}")
endif()

# The check can fail: a login shell with this HOME does leave a mark.
execute_process(COMMAND ${CMAKE_COMMAND} -E env HOME=${home} bash -lc true)
file(GLOB marks ${mark}/*)
if(NOT marks)
  message(FATAL_ERROR "the marking profile did not run for a plain `bash -lc`: the check proves nothing")
endif()
file(REMOVE_RECURSE ${WORK})
