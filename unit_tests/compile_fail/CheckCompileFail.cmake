# Builds one compile-fail target and checks that the build fails with EXPECT in the compiler's first error line;
# with EXPECT empty (the control), that the build succeeds.
#   cmake -DBUILD_DIR=<build tree> -DTARGET=<target> -DEXPECT=<message> [-DCONFIG=<config>] -P CheckCompileFail.cmake
foreach(var BUILD_DIR TARGET)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CheckCompileFail.cmake: ${var} is not set")
  endif()
endforeach()
set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()

execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET} ${config_args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(EXPECT STREQUAL "")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TARGET} must compile, but its build failed:\n${out}")
  endif()
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but its type mistake must not compile "
                      "(expected the first error to contain \"${EXPECT}\")")
endif()

# The first compiler error line: GCC and Clang "file:line:col: error: ...", nvcc "file(line): error: ...", MSVC
# "file(line): error C2338: ...". make's own "Error 1" lines are capitalized; a flag such as -Werror has no colon.
set(error_line "[^\n]*error( [A-Z]+[0-9]+)?:[^\n]*")
string(REGEX MATCH "${error_line}" first "${out}")
string(REGEX MATCHALL "${error_line}" all "${out}")
list(LENGTH all n_errors)
string(REGEX MATCHALL "\n" newlines "${out}")
list(LENGTH newlines n_lines)
if(NOT first)
  message(FATAL_ERROR "${TARGET}: the build failed without an error line from the compiler:\n${out}")
endif()
string(FIND "${first}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${TARGET}: the first error line does not carry the library's message.\n"
                      "  expected: ${EXPECT}\n  first error line: ${first}\n"
                      "  (${n_errors} error lines, ${n_lines} lines of build output)")
endif()
message(STATUS "${TARGET}: first error line: ${first}")
message(STATUS "${TARGET}: ${n_errors} error lines, ${n_lines} lines of build output")
