# ns_blas.m4: choose the CBLAS (--with-blas=openblas|blis|cblas) and find what it offers beyond
# the CBLAS interface (src/common/ns_blas uses those only when they were found here).
#
# NS_BLAS sets BLAS_CFLAGS, BLAS_LIBS (user-settable), and defines NS_BLAS_KIND ("openblas",
# "blis" or "cblas") and HAVE_OPENBLAS_GET_CONFIG, HAVE_OPENBLAS_SET_NUM_THREADS,
# HAVE_OPENBLAS_GET_NUM_THREADS, HAVE_BLIS_H, HAVE_DLADDR as found.
#   openblas  pkg-config openblas                     (Debian: libopenblas-dev; the default)
#   blis      pkg-config blis, else Debian's /usr/include/<multiarch>/blis-{pthread,openmp,serial}
#             and libblis                             (Debian: libblis-dev)
#   cblas     any other library with the CBLAS interface: pkg-config cblas, else blas, else
#             -lcblas; MKL and others through BLAS_CFLAGS/BLAS_LIBS
AC_DEFUN([NS_BLAS], [
  AC_ARG_WITH([blas],
    [AS_HELP_STRING([--with-blas=openblas|blis|cblas],
      [the CBLAS library: OpenBLAS (default), BLIS, or any other CBLAS (set BLAS_CFLAGS/BLAS_LIBS for one pkg-config does not know, e.g. MKL)])],
    [], [with_blas=openblas])
  AC_ARG_VAR([BLAS_CFLAGS], [C compiler flags for the CBLAS (the directory of its cblas.h)])
  AC_ARG_VAR([BLAS_LIBS], [linker flags for the CBLAS])
  ns_blas_given=${BLAS_LIBS:+yes}
  AS_CASE([$with_blas],
    [openblas], [
      AS_IF([test "$ns_blas_given" != yes], [
        PKG_CHECK_MODULES([NS_OPENBLAS], [openblas],
          [BLAS_CFLAGS=$NS_OPENBLAS_CFLAGS; BLAS_LIBS=$NS_OPENBLAS_LIBS],
          [AC_MSG_ERROR([OpenBLAS was not found by pkg-config (openblas.pc). On Debian: apt-get install libopenblas-dev; or choose another CBLAS with --with-blas=blis|cblas])])])],
    [blis], [
      AS_IF([test "$ns_blas_given" != yes], [
        PKG_CHECK_MODULES([NS_BLIS], [blis], [BLAS_CFLAGS=$NS_BLIS_CFLAGS; BLAS_LIBS=$NS_BLIS_LIBS], [
          ns_ma=`$CC -print-multiarch 2>/dev/null`
          for ns_v in pthread openmp serial; do
            if test -n "$ns_ma" && test -f "/usr/include/$ns_ma/blis-$ns_v/cblas.h"; then
              BLAS_CFLAGS="-isystem /usr/include/$ns_ma/blis-$ns_v"
              BLAS_LIBS="-L/usr/lib/$ns_ma/blis-$ns_v -lblis"
              break
            fi
          done
          AS_IF([test -z "$BLAS_LIBS"],
            [AC_MSG_ERROR([BLIS not found (no blis.pc, no /usr/include/<multiarch>/blis-*/cblas.h). On Debian: apt-get install libblis-dev; or set BLAS_CFLAGS and BLAS_LIBS])])
        ])])],
    [cblas], [
      AS_IF([test "$ns_blas_given" != yes], [
        PKG_CHECK_MODULES([NS_CBLAS], [cblas], [BLAS_CFLAGS=$NS_CBLAS_CFLAGS; BLAS_LIBS=$NS_CBLAS_LIBS], [
          PKG_CHECK_MODULES([NS_CBLAS2], [blas], [BLAS_CFLAGS=$NS_CBLAS2_CFLAGS; BLAS_LIBS=$NS_CBLAS2_LIBS],
            [BLAS_LIBS=-lcblas])])])],
    [AC_MSG_ERROR([--with-blas=$with_blas: expected openblas, blis or cblas])])
  AC_DEFINE_UNQUOTED([NS_BLAS_KIND], ["$with_blas"], [the CBLAS chosen at configure time])

  ns_save_CPPFLAGS=$CPPFLAGS; ns_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $BLAS_CFLAGS"; LIBS="$BLAS_LIBS $LIBS"
  AC_CHECK_HEADER([cblas.h], [],
    [AC_MSG_ERROR([cblas.h not found with BLAS_CFLAGS='$BLAS_CFLAGS' (--with-blas=$with_blas)])])
  AC_MSG_CHECKING([for cblas_sgemm and cblas_dsyrk with BLAS_LIBS='$BLAS_LIBS'])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cblas.h>]],
      [[float a = 1, c = 0; double d = 1, e = 0;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &a, 1, 0.0f, &c, 1);
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, 1, 1, 1.0, &d, 1, 0.0, &e, 1);]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([the CBLAS (--with-blas=$with_blas, BLAS_LIBS='$BLAS_LIBS') lacks cblas_sgemm or cblas_dsyrk; see config.log])])
  dnl Extras, used only when present (and only those of the library chosen).
  AS_CASE([$with_blas],
    [openblas], [AC_CHECK_FUNCS([openblas_get_config openblas_set_num_threads openblas_get_num_threads])],
    [blis], [AC_CHECK_HEADERS([blis.h])
             AC_CHECK_FUNCS([bli_thread_set_num_threads bli_thread_get_num_threads bli_info_get_version_str])])
  AC_SEARCH_LIBS([dladdr], [dl], [AC_DEFINE([HAVE_DLADDR], [1], [dladdr is available])])
  NS_DL_LIBS=
  AS_CASE([$ac_cv_search_dladdr], [-l*], [NS_DL_LIBS=$ac_cv_search_dladdr])
  CPPFLAGS=$ns_save_CPPFLAGS; LIBS=$ns_save_LIBS
  BLAS_LIBS="$BLAS_LIBS $NS_DL_LIBS"
  AC_SUBST([BLAS_CFLAGS])
  AC_SUBST([BLAS_LIBS])
])
