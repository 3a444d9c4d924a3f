# ns_mpi.m4: find an MPI C library (Open MPI, MPICH, Cray MPICH, Intel MPI, ...) through its
# compiler wrapper or pkg-config, and the launcher the tests use.
#
# NS_MPI sets MPI_CFLAGS, MPI_LIBS (empty when CC is itself an MPI wrapper), MPI_FLAVOUR (for the
# configure summary: "Open MPI 4.1.4", "MPICH 4.0.2", ...) and MPIEXEC. In order:
#   1. CC compiles and links MPI programs as it is (CC=mpicc.mpich, CC=mpicc, Cray's cc);
#   2. MPI_CFLAGS / MPI_LIBS given by the user;
#   3. the wrapper MPICC=... (default mpicc when it is on PATH but pkg-config knows no MPI) asked
#      for its flags: Open MPI's --showme:compile/--showme:link, MPICH's and Intel MPI's
#      -compile_info/-link_info;
#   4. pkg-config: ompi-c (Open MPI), then mpich.

# NS_MPI_WRAPPER_FLAGS(WRAPPER): MPI_CFLAGS and MPI_LIBS from a compiler wrapper; ns_mpi_ok=yes
# when the wrapper answered.
AC_DEFUN([NS_MPI_WRAPPER_FLAGS], [
  ns_mpi_ok=no
  if ns_cf=`$1 --showme:compile 2>/dev/null` && ns_lf=`$1 --showme:link 2>/dev/null`; then
    MPI_CFLAGS=$ns_cf; MPI_LIBS=$ns_lf; ns_mpi_ok=yes
  elif ns_all=`$1 -compile_info 2>/dev/null` && ns_all="$ns_all `$1 -link_info 2>/dev/null`"; then
    # the whole command line: keep the flags, drop the compiler and -c
    MPI_CFLAGS=; MPI_LIBS=
    for ns_w in $ns_all; do
      case $ns_w in
        -I*|-D*) AS_CASE([" $MPI_CFLAGS "], [*" $ns_w "*], [], [MPI_CFLAGS="$MPI_CFLAGS $ns_w"]) ;;
        -pthread) MPI_CFLAGS="$MPI_CFLAGS $ns_w"; MPI_LIBS="$MPI_LIBS $ns_w" ;;
        -L*|-l*|-Wl,*|*.so|*.so.*|*.a) AS_CASE([" $MPI_LIBS "], [*" $ns_w "*], [], [MPI_LIBS="$MPI_LIBS $ns_w"]) ;;
      esac
    done
    ns_mpi_ok=yes
  fi
])

AC_DEFUN([NS_MPI], [
  AC_ARG_VAR([MPICC], [MPI compiler wrapper to take the MPI flags from (e.g. mpicc.mpich); or build with CC=mpicc.mpich])
  ns_mpi_src=
  AC_MSG_CHECKING([whether $CC builds MPI programs as it is])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[int v, s; MPI_Get_version(&v, &s); return MPI_Init(0, 0);]])],
    [AC_MSG_RESULT([yes]); ns_mpi_src="the compiler $CC"; MPI_CFLAGS=${MPI_CFLAGS-}; MPI_LIBS=${MPI_LIBS-}],
    [AC_MSG_RESULT([no])])
  AS_IF([test -z "$ns_mpi_src" && test -n "${MPI_CFLAGS-}${MPI_LIBS-}"], [ns_mpi_src="MPI_CFLAGS/MPI_LIBS"])
  AS_IF([test -z "$ns_mpi_src" && test -n "${MPICC-}"], [
    AC_MSG_CHECKING([for the MPI flags of $MPICC])
    NS_MPI_WRAPPER_FLAGS([$MPICC])
    AS_IF([test "$ns_mpi_ok" = yes], [AC_MSG_RESULT([$MPI_CFLAGS $MPI_LIBS]); ns_mpi_src="the wrapper $MPICC"],
      [AC_MSG_ERROR([MPICC=$MPICC answers neither --showme:compile (Open MPI) nor -compile_info (MPICH)])])
  ])
  AS_IF([test -z "$ns_mpi_src"], [
    PKG_CHECK_MODULES([MPI], [ompi-c], [ns_mpi_src="pkg-config ompi-c"], [
      PKG_CHECK_MODULES([MPI], [mpich], [ns_mpi_src="pkg-config mpich"], [
        AC_PATH_PROG([MPICC], [mpicc])
        AS_IF([test -n "$MPICC"], [NS_MPI_WRAPPER_FLAGS([$MPICC])])
        AS_IF([test -n "$MPICC" && test "$ns_mpi_ok" = yes], [ns_mpi_src="the wrapper $MPICC"],
          [AC_MSG_ERROR([no MPI found (no mpicc, no ompi-c.pc or mpich.pc). Load your MPI module, or set MPICC=, CC= (an MPI compiler wrapper) or MPI_CFLAGS/MPI_LIBS. On Debian: apt-get install libopenmpi-dev openmpi-bin (or libmpich-dev mpich)])])
      ])
    ])
  ])

  ns_save_CFLAGS=$CFLAGS; ns_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $MPI_CFLAGS"; LIBS="$MPI_LIBS $LIBS"
  AC_MSG_CHECKING([for MPI_Init_thread with the MPI of $ns_mpi_src])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[int p; return MPI_Init_thread(0, 0, MPI_THREAD_FUNNELED, &p);]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([cannot build an MPI program with MPI_CFLAGS='$MPI_CFLAGS' MPI_LIBS='$MPI_LIBS' (from $ns_mpi_src); see config.log])])
  dnl Which MPI (for the summary and the default launcher): the macros its mpi.h defines.
  MPI_FLAVOUR=unknown
  AC_COMPUTE_INT([ns_ompi_major], [OMPI_MAJOR_VERSION], [[#include <mpi.h>]], [ns_ompi_major=])
  AS_IF([test -n "$ns_ompi_major"], [
    AC_COMPUTE_INT([ns_ompi_minor], [OMPI_MINOR_VERSION], [[#include <mpi.h>]], [ns_ompi_minor=0])
    AC_COMPUTE_INT([ns_ompi_rel], [OMPI_RELEASE_VERSION], [[#include <mpi.h>]], [ns_ompi_rel=0])
    MPI_FLAVOUR="Open MPI $ns_ompi_major.$ns_ompi_minor.$ns_ompi_rel"
  ], [
    AC_COMPUTE_INT([ns_mpich_num], [MPICH_NUMVERSION], [[#include <mpi.h>]], [ns_mpich_num=])
    AS_IF([test -n "$ns_mpich_num"], [
      MPI_FLAVOUR="MPICH $(( ns_mpich_num / 10000000 )).$(( ns_mpich_num / 100000 % 100 )).$(( ns_mpich_num / 1000 % 100 ))"])
  ])
  CFLAGS=$ns_save_CFLAGS; LIBS=$ns_save_LIBS
  AC_MSG_CHECKING([which MPI])
  AC_MSG_RESULT([$MPI_FLAVOUR])

  dnl The launcher the tests use: the one of the same MPI when it has a suffixed name (Debian
  dnl installs both as mpiexec.openmpi and mpiexec.mpich; plain mpiexec is whichever is default).
  AC_ARG_WITH([mpiexec],
    [AS_HELP_STRING([--with-mpiexec=PATH], [MPI launcher used by the tests (default: the one of the MPI found: mpiexec.openmpi or mpiexec.mpich, else mpiexec on PATH)])],
    [MPIEXEC=$withval],
    [AS_CASE([$MPI_FLAVOUR],
       ["Open MPI"*], [AC_PATH_PROGS([MPIEXEC], [mpiexec.openmpi mpiexec], [mpiexec])],
       [MPICH*], [AC_PATH_PROGS([MPIEXEC], [mpiexec.mpich mpiexec.hydra mpiexec], [mpiexec])],
       [AC_PATH_PROG([MPIEXEC], [mpiexec], [mpiexec])])])
  AC_SUBST([MPIEXEC])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
])
