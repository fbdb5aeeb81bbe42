# source.sh: sourced by build.sh and build-upload.sh. breakpad_source DIR PROG
# checks the build tools and leaves Google Breakpad's source at $BREAKPAD_COMMIT
# (default: the commit our figures come from) in DIR, fetched from
# $BREAKPAD_REPO (a git URL or a local git directory) unless DIR already holds it.
# Without $BREAKPAD_REPO, the shared copy beside the checkout
# (../shared/src/breakpad.git, a one-commit bare repository every development
# and CI machine has) is used when it exists, so that no network is needed;
# GitHub otherwise.
breakpad_source() {
	dir=$1
	commit=${BREAKPAD_COMMIT:-418aacd617897c19d960ec3e649f42ea95a6363a}
	shared=$(cd "$(dirname "$0")/../.." && pwd)/../shared/src/breakpad.git
	if [ -z "${BREAKPAD_REPO:-}" ] && [ -d "$shared" ]; then
		repo=$shared
	else
		repo=${BREAKPAD_REPO:-https://github.com/google/breakpad}
	fi
	for tool in git g++ make; do
		command -v "$tool" >/dev/null 2>&1 || {
			echo "$2: $tool not found (apt-get install -y git g++ make)" >&2
			exit 1
		}
	done
	if [ ! -x "$dir/configure" ]; then
		mkdir -p "$dir"
		# A shallow fetch of the one commit (GitHub serves any reachable
		# commit), falling back to a full clone for servers that refuse it.
		git -C "$dir" init -q
		if ! git -C "$dir" fetch -q --depth 1 "$repo" "$commit"; then
			git -C "$dir" fetch -q "$repo" '+refs/heads/*:refs/remotes/origin/*'
		fi
		git -C "$dir" -c advice.detachedHead=false checkout -q "$commit"
	fi
}
