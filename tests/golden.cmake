# Golden expectations: each fixture's findings (line:col rule fix) compared
# exactly with its hand-written .expect, in the default mode users run.
file(GLOB_RECURSE PREEMPTIFY_FIXTURES RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/fixtures/drivers/*.c)
list(SORT PREEMPTIFY_FIXTURES)
add_test(NAME golden_fixtures COMMAND scan_dump --check ${PREEMPTIFY_FIXTURES}
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME cli_scan_fixtures COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:preemptify>
  -DSRC=${CMAKE_SOURCE_DIR} -P ${CMAKE_SOURCE_DIR}/tests/scripts/cli_scan.cmake)
add_test(NAME rewrite_fixture_tree COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/rewrite_fixtures.sh
  $<TARGET_FILE:preemptify> ${CMAKE_SOURCE_DIR})
add_test(NAME git_e2e_fixture_tree COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/git_e2e.sh
  $<TARGET_FILE:preemptify> ${CMAKE_SOURCE_DIR})
add_test(NAME rewrite_modern COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/rewrite_modern.sh
  $<TARGET_FILE:preemptify> ${CMAKE_SOURCE_DIR})
# --modernize: the protected NR_CPUS arrays the default leaves alone converted (fixtures/expected-modernize)
add_test(NAME rewrite_modernize COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/rewrite_modernize.sh
  $<TARGET_FILE:preemptify> ${CMAKE_SOURCE_DIR})
# --fix-sleep: GFP_KERNEL made GFP_ATOMIC where P006 proves the context atomic (fixtures/expected-fix-sleep)
add_test(NAME rewrite_fix_sleep COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/rewrite_fix_sleep.sh
  $<TARGET_FILE:preemptify> ${CMAKE_SOURCE_DIR})
# without spatch these say so and exit 77: Skipped, not Passed
set_tests_properties(rewrite_fixture_tree git_e2e_fixture_tree rewrite_modern rewrite_modernize
  rewrite_fix_sleep
  PROPERTIES SKIP_RETURN_CODE 77)
