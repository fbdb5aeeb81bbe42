#!/bin/sh
# build-upload.sh: build Google Breakpad's upload clients, minidump_upload
# and sym_upload (src/tools/linux/symupload), from source, so that the crash
# server's tests (crashd, docs/crashd.md "Clients") and the symbol server's
# post to ours with the real thing. The sibling of build.sh, which builds the
# processor; the source is got the same way.
#
# Usage: tools/breakpad/build-upload.sh [DIR]   (DIR defaults to /tmp/bpsrc-upload)
#
#   BREAKPAD_COMMIT   the commit to build (default: the one build.sh builds,
#                     418aacd617897c19d960ec3e649f42ea95a6363a)
#   BREAKPAD_REPO     where to get it: a git URL or a local git directory (a
#                     bare mirror works) (default: ../shared/src/breakpad.git
#                     beside the checkout when it is there, a one-commit copy
#                     at 418aacd that needs no network; else
#                     https://github.com/google/breakpad)
#   JOBS              make -j (default: number of CPUs)
#
# On a fresh Debian (12 and later) as root:
#   apt-get update && apt-get install -y git g++ make libcurl4
# The two programs are not linked with libcurl: they dlopen libcurl.so,
# libcurl.so.4 (Debian's libcurl4), libcurl-gnutls.so.4 or libcurl.so.3 when
# they upload (src/common/linux/http_upload.cc), so libcurl is needed to run
# them, not to build them.
#
# A separate tree from build.sh's, because build.sh configures with
# --disable-tools, which leaves these targets out of the Makefile. Only the
# two targets are made (a handful of files, no third_party submodule).
# Nothing of Breakpad is copied into this repository.
#
# Afterwards:
#   export GOBREAKPAD_BREAKPAD_MINIDUMP_UPLOAD=DIR/src/tools/linux/symupload/minidump_upload
#   export GOBREAKPAD_BREAKPAD_SYM_UPLOAD=DIR/src/tools/linux/symupload/sym_upload
set -eu

dir=${1:-/tmp/bpsrc-upload}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

. "$(dirname "$0")/source.sh"
breakpad_source "$dir" build-upload.sh

cd "$dir"
if [ ! -f Makefile ]; then
	./configure
fi
make -j"$jobs" src/tools/linux/symupload/minidump_upload src/tools/linux/symupload/sym_upload

echo "GOBREAKPAD_BREAKPAD_MINIDUMP_UPLOAD=$dir/src/tools/linux/symupload/minidump_upload"
echo "GOBREAKPAD_BREAKPAD_SYM_UPLOAD=$dir/src/tools/linux/symupload/sym_upload"
