# What `cmake --install` puts under the prefix, and the CMake package that
# lets another project use it (find_package(Tandem)):
#
#   bin/                         tandem-opt, tandem-compile, tandem-calibrate
#   lib/                         the compiler's libraries and the runtime
#                                (libTandemRuntime.a, libTandemRuntimeIO.a,
#                                libTandemBlasCore.a),
#                                which tandem-compile links models with
#   lib/cmake/tandem/            TandemConfig.cmake, TandemTargets.cmake
#   include/tandem/              the compiler's headers (with the generated
#                                .inc files) and the runtime's shared headers
#   include/tandem_runtime.h     the runtime's C ABI
#   lib/python3/site-packages/   the Python frontend (`import tandem`)
#   share/doc/tandem/            the documentation
#
# Nothing in it names the build tree or the prefix: tandem-compile finds the
# runtime next to itself (../lib), the Python package finds the tools in
# ../../../../bin, and the CMake package computes its prefix from where it
# lies, so an installed tree still works after it is moved.

include(CMakePackageConfigHelpers)

install(TARGETS tandem-opt tandem-compile tandem-calibrate
        RUNTIME DESTINATION bin)
install(TARGETS TandemRuntime TandemRuntimeIO TandemBlasCore EXPORT TandemTargets
        ARCHIVE DESTINATION lib)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tandem
        ${PROJECT_SOURCE_DIR}/runtime/include/tandem
        ${PROJECT_BINARY_DIR}/include/tandem
        DESTINATION include
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def" PATTERN "*.inc"
        PATTERN "*.td" PATTERN "CMakeFiles" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/tandem_runtime.h
        DESTINATION include)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/tandem
        DESTINATION lib/python3/site-packages
        PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/tandem)

install(EXPORT TandemTargets NAMESPACE Tandem:: DESTINATION lib/cmake/tandem)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/TandemConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lib/cmake/tandem/TandemConfig.cmake
  INSTALL_DESTINATION lib/cmake/tandem)
install(FILES ${PROJECT_BINARY_DIR}/lib/cmake/tandem/TandemConfig.cmake
        DESTINATION lib/cmake/tandem)
