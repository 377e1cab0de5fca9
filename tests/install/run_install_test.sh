#!/usr/bin/env bash
# Uses TaskGrid from outside its tree, as the README tells a user to.
#
#   run_install_test.sh package BUILD SOURCE WORK MPIEXEC VERSION [MPI [OTHER_BUILD]]
#     MPI (mpich, the default, or openmpi) is the family BUILD was built with:
#     it names the package (TaskGrid, TaskGridOpenMPI), the .pc file (taskgrid,
#     taskgrid-openmpi), the library and the wrappers. OTHER_BUILD, a build
#     with the other MPI, is installed into the same prefix first: both sets
#     of files must be there side by side afterwards.
#     cmake --install BUILD --prefix WORK/prefix; then first_program.cpp and
#     c_vector_scale.c built (a) by a CMake project with find_package(TaskGrid)
#     and only CMAKE_PREFIX_PATH, (b) by a C-only CMake project, (c) with
#     pkg-config and MPICH's wrappers, and with pkg-config --static and the
#     plain C compiler; each run under MPIEXEC -n 2. The installed
#     taskgrid-timeline runs (--help, --version).
#   run_install_test.sh subdir BUILD SOURCE WORK MPIEXEC VERSION [MPI]
#     a project that add_subdirectory()s SOURCE: configured (its CMakeLists
#     checks that only the runtime is there), built, first_program run.
set -euo pipefail

mode=$1 build=$2 source=$3 work=$4 mpiexec=$5 version=$6 mpi=${7:-mpich} other_build=${8:-}
case $mpi in
  mpich) package=TaskGrid pc=taskgrid pc_mpi=mpich suffix="" ;;
  openmpi) package=TaskGridOpenMPI pc=taskgrid-openmpi pc_mpi=ompi-c suffix=-openmpi ;;
  *) echo "FAIL: unknown MPI family '$mpi'" >&2; exit 2 ;;
esac
mpicxx=mpicxx.$mpi mpicc=mpicc.$mpi
examples=$source/apps/examples
here=$source/tests/install

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== $*"; }

# run NAME REGEX COMMAND...: COMMAND must exit 0 and print a line matching REGEX.
run() {
  local name=$1 regex=$2
  shift 2
  local out
  if ! out=$(timeout 120 "$@" 2>&1); then
    printf '%s\n' "$out"
    fail "$name exited non-zero"
  fi
  printf '%s\n' "$out"
  grep -Eq "$regex" <<<"$out" || fail "$name: no line matching '$regex'"
}

# The consumer builds use neither TaskGrid's compiler launcher nor its flags.
unset CFLAGS CXXFLAGS LDFLAGS CMAKE_PREFIX_PATH PKG_CONFIG_PATH
rm -rf "$work"
mkdir -p "$work"

if [[ $mode == subdir ]]; then
  step "add_subdirectory consumer"
  cmake -S "$here/subdir_consumer" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DTASKGRID_SOURCE_DIR="$source" -DTASKGRID_MPI="$mpi" | tee "$work/configure.log"
  grep -q "check: only the TaskGrid runtime is configured" "$work/configure.log" ||
    fail "the subdirectory checks did not run"
  cmake --build "$work/build" --target first_program -j2
  run "add_subdirectory first_program" "sum = 2000.0 \(expected 2000.0\)" \
    "$mpiexec" -n 2 "$work/build/first_program"
  echo "PASS"
  exit 0
fi

prefix=$work/prefix
step "cmake --install $build --prefix $prefix"
# installed_files PACKAGE PC SUFFIX: every file one build installs.
installed_files() {
  for f in include/taskgrid/taskgrid.hpp include/taskgrid/taskgrid.h include/taskgrid/version.h \
    "lib/libtaskgrid$3.a" "lib/cmake/$1/$1Config.cmake" "lib/cmake/$1/$1ConfigVersion.cmake" \
    "lib/cmake/$1/TaskGridTargets.cmake" "lib/pkgconfig/$2.pc"; do
    [[ -f $prefix/$f ]] || fail "not installed: $f"
  done
}
if [[ -n $other_build ]]; then
  step "cmake --install $other_build --prefix $prefix (the other MPI's build, first)"
  cmake --install "$other_build" --prefix "$prefix" >/dev/null
fi
cmake --install "$build" --prefix "$prefix"
installed_files "$package" "$pc" "$suffix"
if [[ -n $other_build ]]; then
  step "side by side: both builds' files"
  if [[ $mpi == openmpi ]]; then installed_files TaskGrid taskgrid ""; else
    installed_files TaskGridOpenMPI taskgrid-openmpi -openmpi; fi
fi
grep -q "TASKGRID_VERSION_STRING \"$version\"" "$prefix/include/taskgrid/version.h" ||
  fail "installed version.h is not version $version"

step "taskgrid-timeline"
[[ -x $prefix/bin/taskgrid-timeline ]] || fail "not installed (executable): bin/taskgrid-timeline"
run "taskgrid-timeline --help" "^usage: taskgrid_timeline" "$prefix/bin/taskgrid-timeline" --help
run "taskgrid-timeline --version" "^taskgrid_timeline $version$" \
  "$prefix/bin/taskgrid-timeline" --version

step "(a) find_package($package) from a C and C++ project"
# No MPI compiler given: the package must pick the MPI TaskGrid was built with.
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLES_DIR="$examples" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DTASKGRID_PACKAGE="$package"
cmake --build "$work/consumer" -j2
grep -Eq "^MPI_CXX_COMPILER:FILEPATH=.*mpicxx\\.$mpi\$" "$work/consumer/CMakeCache.txt" ||
  fail "the consumer did not get $mpicxx: $(grep '^MPI_CXX_COMPILER:' "$work/consumer/CMakeCache.txt")"
# The standard comes from the target; TaskGrid's own flags do not leak.
grep -Eq -- '-std=(c|gnu)\+\+20' "$work/consumer/compile_commands.json" ||
  fail "first_program was not compiled with -std=c++20"
if grep -Eq -- '-march=native|-Wshadow|-Wconversion' "$work/consumer/compile_commands.json"; then
  fail "TaskGrid's build flags leaked into the consumer"
fi
run "find_package first_program" "sum = 2000.0 \(expected 2000.0\)" \
  "$mpiexec" -n 2 "$work/consumer/first_program"
run "find_package c_vector_scale" "^verified$" "$mpiexec" -n 2 "$work/consumer/c_vector_scale"

step "(b) find_package($package) from a C-only project"
cmake -S "$here/consumer_c" -B "$work/consumer_c" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLES_DIR="$examples" -DTASKGRID_PACKAGE="$package"
cmake --build "$work/consumer_c" -j2
run "C-only c_vector_scale" "^verified$" "$mpiexec" -n 2 "$work/consumer_c/c_vector_scale"

step "(c) pkg-config ($pc) with $mpi's wrappers"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[[ $(pkg-config --modversion "$pc") == "$version" ]] || fail "pkg-config --modversion $pc"
mkdir -p "$work/pc"
# Every installed header compiles alone (C++; the .h ones as C too).
for header in "$prefix"/include/taskgrid/*.h "$prefix"/include/taskgrid/*.hpp; do
  name=taskgrid/$(basename "$header")
  # shellcheck disable=SC2046
  echo "#include <$name>" | "$mpicxx" -std=c++20 -fsyntax-only -x c++ - \
    $(pkg-config --cflags "$pc") || fail "$name does not compile alone (C++)"
  if [[ $header == *.h ]]; then
    # shellcheck disable=SC2046
    echo "#include <$name>" | "$mpicc" -std=c99 -fsyntax-only -x c - \
      $(pkg-config --cflags "$pc") || fail "$name does not compile alone (C)"
  fi
done
# shellcheck disable=SC2046  # the flags are words
"$mpicxx" -std=c++20 -O2 "$examples/first_program.cpp" -o "$work/pc/first_program" \
  $(pkg-config --cflags --libs "$pc")
# shellcheck disable=SC2046
"$mpicc" -O2 "$examples/c_vector_scale.c" -o "$work/pc/c_vector_scale" \
  $(pkg-config --cflags --libs "$pc")
run "pkg-config first_program" "sum = 2000.0 \(expected 2000.0\)" \
  "$mpiexec" -n 2 "$work/pc/first_program"
run "pkg-config c_vector_scale" "^verified$" "$mpiexec" -n 2 "$work/pc/c_vector_scale"

step "(d) pkg-config --static: the private fields from the library's link interface"
# cmake/TaskGridInstall.cmake writes them from the taskgrid target: threads,
# dl (CMAKE_DL_LIBS), the C++ runtime, and MPI as its own pkg-config module.
private=$(sed -n 's/^Libs.private: //p' "$prefix/lib/pkgconfig/$pc.pc")
for lib in -pthread -ldl -lstdc++ -lm; do
  [[ " $private " == *" $lib "* ]] || fail "Libs.private lacks $lib: '$private'"
done
if pkg-config --exists "$pc_mpi"; then
  [[ $(pkg-config --print-requires-private "$pc") == "$pc_mpi"* ]] ||
    fail "Requires.private is not $pc_mpi: '$(pkg-config --print-requires-private "$pc")'"
  # The plain C compiler, not MPI's wrapper: MPI, threads and the C++
  # runtime must all come from the .pc file.
  # shellcheck disable=SC2046
  cc -O2 "$examples/c_vector_scale.c" -o "$work/pc/c_vector_scale_static" \
    $(pkg-config --static --cflags --libs "$pc") || fail "cc with pkg-config --static failed"
  run "pkg-config --static c_vector_scale" "^verified$" "$mpiexec" -n 2 \
    "$work/pc/c_vector_scale_static"
else
  echo "pkg-config has no $pc_mpi module: the plain-compiler link is skipped"
fi

echo "PASS"
