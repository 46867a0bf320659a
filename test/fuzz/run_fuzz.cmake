# One bounded fuzzing run for ctest: BIN over a fresh scratch copy of SEEDS (in WORK) for SECONDS;
# crash reproducers go to CRASHES/<target>/. Fails when libFuzzer found something. The seed is
# fixed, so every run walks the same inputs (a faster machine only gets further): the suite's
# verdict does not change by chance; long runs (tools/fuzz.sh TARGET SECONDS) explore at random.
get_filename_component(target ${BIN} NAME)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK} ${CRASHES}/${target})
file(GLOB seeds ${SEEDS}/*)
file(COPY ${seeds} DESTINATION ${WORK})
execute_process(COMMAND ${BIN} -seed=1 -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=25
                        -artifact_prefix=${CRASHES}/${target}/ ${WORK}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${target} found a problem (exit ${rc}); reproducer in ${CRASHES}/${target}/")
endif()
