# ctest install_and_find_package: `cmake --install` of BUILD into a scratch prefix, then tests/consumer configured,
# built and run against it (the JIT compiling from the installed device headers), and the installed CLI asked for
# its version. -DBUILD, -DSRC, -DDEPS (TILEGEMM_DEPS_DIR), -DCXX (the build's compiler).
set(work ${BUILD}/consumer-test)
file(REMOVE_RECURSE ${work})
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${work}/prefix --component library)
run("configuring the consumer" ${CMAKE_COMMAND} -S ${SRC}/tests/consumer -B ${work}/build
    -DCMAKE_PREFIX_PATH=${work}/prefix -DTILEGEMM_DEPS_DIR=${DEPS} -DCMAKE_CXX_COMPILER=${CXX})
run("building the consumer" ${CMAKE_COMMAND} --build ${work}/build)
run("running the consumer" ${CMAKE_COMMAND} -E env TILEGEMM_DEVICE_INCLUDE_DIR=${work}/prefix/include
    DG_JIT_CACHE_DIR=${work}/jit ${work}/build/consumer)
if(NOT out MATCHES "config [0-9]+x[0-9]+x[0-9]+ stages [0-9]+" OR NOT out MATCHES "compiled 1 failed 0")
  message(FATAL_ERROR "unexpected consumer output:\n${out}")
endif()
run("the installed CLI" ${work}/prefix/bin/tilegemm --version)
if(NOT out MATCHES "^tilegemm [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ")
  message(FATAL_ERROR "unexpected tilegemm --version:\n${out}")
endif()
message(STATUS "consumer: ${out}")
