#!/usr/bin/env bash
# Unpacks Debian's Open MPI (.deb files from scripts/fetch_mpi_debs.sh) under a prefix, on a machine without MPI and
# without network, and writes PREFIX/env.sh, the environment that uses it:
#
#   scripts/mpi_prefix.sh DIR PREFIX && source PREFIX/env.sh
#   cmake --preset cuda ...        # finds this MPI on PATH (or name it: -DMPI_CXX_COMPILER="$MPICXX")
#   mpiexec -n 2 build/cuda/unit_tests/mpi/softmargin_mpi_tests_cuda
#
# - every .deb is unpacked with `dpkg -x` (checked against DIR/SHA256SUMS where present);
# - Open MPI is relocated by OPAL_PREFIX=PREFIX/usr (components, help files, wrapper data) and PMIx by PMIX_PREFIX
#   (with its data and component folders); the wrapper compiler is PREFIX/usr/bin/mpicxx.openmpi ($MPICXX), the
#   launcher PREFIX/usr/bin/mpiexec.openmpi ($MPIEXEC); PREFIX/bin, first on PATH, has them under their plain names
#   (mpicxx, mpiexec, ...), which Debian's alternatives would give and dpkg -x does not;
# - PREFIX/ld holds links to the libraries the dynamic loader must find there (LD_LIBRARY_PATH): Open MPI's and
#   PMIx's own always, every other library only where the machine has none of that name, so that programs which do
#   not use MPI keep the machine's own libraries;
# - one node, shared memory only: the ob1 messaging layer over the self and vader transports, vader without
#   single-copy (kernel-assisted copies are not there under gVisor), and oversubscription allowed; root may run.
set -euo pipefail
dir="$(cd "${1:?usage: mpi_prefix.sh DEB_DIR PREFIX}" && pwd)"
mkdir -p "${2:?usage: mpi_prefix.sh DEB_DIR PREFIX}"
prefix="$(cd "$2" && pwd)"
if [ -f "$dir/SHA256SUMS" ]; then (cd "$dir" && sha256sum --quiet -c SHA256SUMS); fi
for deb in "$dir"/*.deb; do dpkg -x "$deb" "$prefix"; done

lib="$prefix/usr/lib/x86_64-linux-gnu"
rm -rf "$prefix/ld" "$prefix/bin"
mkdir -p "$prefix/ld" "$prefix/bin"
# The machine's own copy of a library: its path in the loader's cache, if that file is not empty.
system_has() {
  local path
  path="$(ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n {print $NF; exit}')"
  [ -n "$path" ] && [ -s "$path" ]
}
for f in "$lib"/*.so.* "$lib"/pmix2/lib/*.so.*; do
  [ -e "$f" ] || continue
  name="$(basename "$f")"
  case "$name" in
    libmpi*|libopen-*|libmca_common_*|liboshmem*|libompitrace*|libpmix*) ln -sf "$f" "$prefix/ld/$name" ;;
    *) system_has "$name" || ln -sf "$f" "$prefix/ld/$name" ;;
  esac
done
# The plain names, for CMake's FindMPI; the wrapper reads the data file of the name it is called by (Debian ships a
# file for each name).
for name in mpiexec mpirun; do ln -sf ../usr/bin/orterun "$prefix/bin/$name"; done
for name in mpicc mpicxx mpic++; do ln -sf ../usr/bin/opal_wrapper "$prefix/bin/$name"; done

cat > "$prefix/env.sh" <<EOF
# Open MPI unpacked under $prefix (scripts/mpi_prefix.sh).
export OPAL_PREFIX="$prefix/usr"
export OPAL_SYSCONFDIR="$prefix/etc/openmpi"
export PMIX_PREFIX="$lib/pmix2" PMIX_DATADIR="$lib/pmix2/share"
export PMIX_PKGDATADIR="$lib/pmix2/share/pmix" PMIX_PKGLIBDIR="$lib/pmix2/lib/pmix"
export PATH="$prefix/bin:$prefix/usr/bin:\$PATH"
export LD_LIBRARY_PATH="$prefix/ld\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export MPICXX="$prefix/usr/bin/mpicxx.openmpi"
export MPIEXEC="$prefix/usr/bin/mpiexec.openmpi"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
EOF
echo "Open MPI under $prefix: $(ls "$prefix/ld" | wc -l) libraries linked into $prefix/ld; source $prefix/env.sh"
