#!/usr/bin/env bash
# Downloads Debian's Open MPI (build and run time: wrappers, headers, mpirun, libraries and the libraries they load)
# as .deb files into a folder, for a machine without network and without MPI (the H200 machine):
#
#   scripts/fetch_mpi_debs.sh [DIR]          # here, on a Debian 12 machine with apt sources (default DIR .deps/openmpi)
#
# and there, unpack them under a prefix and take the environment it needs:
#
#   scripts/mpi_prefix.sh DIR PREFIX         # dpkg -x of every .deb into PREFIX, writes PREFIX/env.sh
#   source PREFIX/env.sh                     # PATH, LD_LIBRARY_PATH, OPAL_PREFIX, MPICXX, MPIEXEC, OMPI_* (mpi_prefix.sh)
#   cmake ... -DMPI_CXX_COMPILER="$MPICXX" -DMPIEXEC_EXECUTABLE="$MPIEXEC"
#
# What mpi_prefix.sh does, by hand: `for f in DIR/*.deb; do dpkg -x "$f" PREFIX; done`; then Open MPI finds its
# components, help files and wrapper data under OPAL_PREFIX=PREFIX/usr (Debian's paths are all below /usr), PMIx its
# own under PMIX_PREFIX=PREFIX/usr/lib/x86_64-linux-gnu/pmix2, the programs are PREFIX/usr/bin/mpicxx.openmpi
# and mpirun.openmpi (Debian's alternatives give the plain names, which dpkg -x does not make), and the dynamic loader
# needs LD_LIBRARY_PATH to reach the libraries: Open MPI's own, and those of the others the machine lacks.
#
# The list is Debian 12's (Open MPI 4.1.4). libopenmpi-dev comes without its Fortran and static-linking needs;
# libhwloc-plugins (X11, OpenCL and PCI plugins that hwloc loads if present) is left out. About 10 MB.
set -euo pipefail
dir="${1:-.deps/openmpi}"
packages=(
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev
  libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libpmix2 libmunge2 libnuma1 libudev1
  libucx0 libfabric1 libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2
  libpsm-infinipath1 libatomic1 libuuid1
)
mkdir -p "$dir"
cd "$dir"
rm -f ./*.deb
apt-get -o APT::Sandbox::User=root download "${packages[@]}"
sha256sum ./*.deb > SHA256SUMS
echo "$(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1) in $PWD"
