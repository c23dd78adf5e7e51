# Sourced by the host-side VM scripts (run.sh, scale.sh): what they share
# to build a guest's initramfs.

# Copy a program and every library ldd lists into root, keeping paths.
add_prog() { # root src dest
	local root=$1 src=$2 dest=$3 lib
	mkdir -p "$root$(dirname "$dest")"
	cp -L "$src" "$root$dest"
	for lib in $(ldd "$src" | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
