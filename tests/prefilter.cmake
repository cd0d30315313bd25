# The prefilter never changes an answer (tests/prefilter/prefilter.sh): the
# fixture sets with and without --no-prefilter, and a file per registry word.
add_test(NAME prefilter_sound COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/prefilter/prefilter.sh
  $<TARGET_FILE:preemptify> ${CMAKE_SOURCE_DIR})
