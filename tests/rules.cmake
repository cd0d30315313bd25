# Rule registry unit tests (src/rules/rules.def, src/rules/fixes.def).
add_executable(test_rules ${CMAKE_CURRENT_SOURCE_DIR}/test_rules.c)
target_link_libraries(test_rules PRIVATE preemptify_core)
add_test(NAME rules_registry COMMAND test_rules ${CMAKE_SOURCE_DIR})
