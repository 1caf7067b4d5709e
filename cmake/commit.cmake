# ortqual_commit(OUT DIR): the commit a build of the sources in DIR is made from, for
# `ortqual --version` and the evidence's tool_version: "commit <git describe --always --dirty>"
# where DIR is a git checkout (its own .git: a tarball unpacked inside another project's
# checkout is not that project's commit), else "unknown commit". Read at every build, not at
# configure time: a commit made since the configure step is the one the build names.
# `cmake -DOQ_DIR=DIR -P cmake/commit.cmake` prints it (tests/e2e/version_commit.sh); with
# -DOQ_OUT=FILE -DOQ_VERSION=X.Y.Z it writes FILE's ORTQUAL_VERSION_BUILD, "X.Y.Z (commit ...)",
# rewriting FILE only when that changes (so that a build without a new commit rebuilds nothing).
function(ortqual_commit out dir)
  set(commit "unknown commit")
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS "${dir}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${dir}" describe --always --dirty
                    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND described)
      set(commit "commit ${described}")
    endif()
  endif()
  set(${out} "${commit}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED OQ_DIR)
  ortqual_commit(commit "${OQ_DIR}")
  if(DEFINED OQ_OUT)
    file(WRITE "${OQ_OUT}.tmp" "#define ORTQUAL_VERSION_BUILD \"${OQ_VERSION} (${commit})\"\n")
    file(COPY_FILE "${OQ_OUT}.tmp" "${OQ_OUT}" ONLY_IF_DIFFERENT)
    file(REMOVE "${OQ_OUT}.tmp")
  else()
    message("${commit}")
  endif()
endif()
