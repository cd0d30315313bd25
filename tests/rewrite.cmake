# Rewrite stage: rewrite_plan against expected files, spawn, writefile,
# textdiff, failure isolation with a fake spatch; standalone .cocci runs.
add_executable(test_rewrite ${CMAKE_CURRENT_LIST_DIR}/test_rewrite.c)
target_compile_options(test_rewrite PRIVATE ${PREEMPTIFY_WARNINGS})
target_compile_definitions(test_rewrite PRIVATE
  REWRITE_TEST_DIR="${CMAKE_CURRENT_LIST_DIR}/rewrite")
target_link_libraries(test_rewrite PRIVATE preemptify_core)
foreach(part spawn writefile textdiff fixtures missing fake-crash fake-exit255 fake-hang
    fake-unbalanced fake-comment fake-extra fake-lose array-together hostile-name changed-after-scan slice)
  add_test(NAME rewrite_${part} COMMAND test_rewrite ${part})
  # a part that needs spatch where it is not installed says so and exits 77
  set_tests_properties(rewrite_${part} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# Each semantic patch run standalone (no -D sites) on its .c, compared with .res,
# as the README documents it: from the source root (where #include
# "cocci/sidecar.cocci" resolves) and from another working directory.
find_program(SPATCH_PROGRAM spatch)
if(SPATCH_PROGRAM)
  file(GLOB _cocci_inputs ${CMAKE_CURRENT_LIST_DIR}/rewrite/standalone/*.c)
  foreach(input ${_cocci_inputs})
    get_filename_component(kind ${input} NAME_WE)
    add_test(NAME cocci_standalone_${kind}
      COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/rewrite/standalone.sh ${SPATCH_PROGRAM}
        ${CMAKE_SOURCE_DIR}/cocci/${kind}.cocci ${input}
        ${CMAKE_CURRENT_LIST_DIR}/rewrite/standalone/${kind}.res)
    # The coccicheck modes, as scripts/coccicheck runs them: patch gives the
    # .res, report/org/context name the lines in .modes.
    add_test(NAME cocci_modes_${kind}
      COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/rewrite/modes.sh ${SPATCH_PROGRAM}
        ${CMAKE_SOURCE_DIR}/cocci/${kind}.cocci ${input}
        ${CMAKE_CURRENT_LIST_DIR}/rewrite/standalone/${kind}.res
        ${CMAKE_CURRENT_LIST_DIR}/rewrite/standalone/${kind}.modes)
  endforeach()
endif()
