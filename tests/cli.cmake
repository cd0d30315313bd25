# CLI plumbing: unit tests (emit, option parsing, walk, thread pool) and
# end-to-end tests of the real binary (tests/cli/*.sh).
add_executable(test_emit ${CMAKE_CURRENT_SOURCE_DIR}/test_emit.c)
target_compile_options(test_emit PRIVATE ${PREEMPTIFY_WARNINGS})
target_link_libraries(test_emit PRIVATE preemptify_core)
add_test(NAME cli_unit COMMAND test_emit)

# The official SARIF 2.1.0 schema, fetched from npm (checksum-pinned) once.
add_test(NAME cli_sarif_schema_fetch
  COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/fetch-sarif-schema.sh ${CMAKE_BINARY_DIR}/sarif)
set_tests_properties(cli_sarif_schema_fetch PROPERTIES FIXTURES_SETUP sarif_schema)

set(PREEMPTIFY_CLI_TESTS usage scan outputs inputs spawn scan_interrupt baseline config formats explain_rules interrupt files odd_input tree bringup ctxswitch soa rounds rules_doc exit_status quiet streams progress completion identity checkpatch regions contexts contracts macros fields encoding paths half26 walkthrough install_docs series_cc cache cache_files color entries header_locks header_predicates percpu_kept carried asmentry)
foreach(t ${PREEMPTIFY_CLI_TESTS})
  add_test(NAME cli_${t}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/${t}.sh $<TARGET_FILE:preemptify> ${CMAKE_SOURCE_DIR}
            ${CMAKE_BINARY_DIR}/sarif/sarif-schema-2.1.0.json)
endforeach()
set_tests_properties(cli_formats cli_encoding PROPERTIES FIXTURES_REQUIRED sarif_schema)

add_test(NAME cli_man_page COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/man.sh ${CMAKE_SOURCE_DIR}/docs/preemptify.1)
# A test whose tool (spatch, script, groff, checkpatch.pl) is missing exits 77
# after saying why (tests/cli/lib.sh: have, skip_all): ctest shows it Skipped.
foreach(t ${PREEMPTIFY_CLI_TESTS})
  set_tests_properties(cli_${t} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
set_tests_properties(cli_man_page PROPERTIES SKIP_RETURN_CODE 77)
