# Analysis test tools and unit tests (CFG, data-flow, rules).
add_executable(scan_dump ${CMAKE_CURRENT_SOURCE_DIR}/tools/scan_dump.c)
target_link_libraries(scan_dump PRIVATE preemptify_core)
add_executable(test_analysis ${CMAKE_CURRENT_SOURCE_DIR}/test_analysis.c)
target_link_libraries(test_analysis PRIVATE preemptify_core)
add_test(NAME analysis_unit COMMAND test_analysis)
