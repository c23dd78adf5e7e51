# Sourced by tests/vm/kernels.sh and tests/vm/systemd.sh: debian_uri prints
# the URI of this machine's Debian archive, read from its own apt sources,
# so that no host name is written in the project's files.
# The URI of the machine's Debian archive (the source that carries the
# 'bookworm' suite itself, not -security), from one-line or deb822 sources.
debian_uri() {
	local f uri=
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk '$1 == "deb" {
			i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) == "bookworm") { print $i; exit } }' "$f")
		[ -n "$uri" ] && { echo "$uri"; return; }
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk 'BEGIN { RS = ""; FS = "\n" } {
			u = ""; s = 0; en = 1
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, a, " "); u = a[1] }
				if ($i ~ /^Suites:/ && $i ~ /[ \t]bookworm([ \t]|$)/) s = 1
				if ($i ~ /^Enabled:[ \t]*no/) en = 0
			}
			if (u != "" && s && en) { print u; exit } }' "$f")
		[ -n "$uri" ] && { echo "$uri"; return; }
	done
	return 1
}
