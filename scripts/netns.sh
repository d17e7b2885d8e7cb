# Sourced by the scripts that stand network namespaces in for hosts
# (isolate-netns.sh, predict-netns.sh), after common.sh. netns_cluster
# PREFIX OCTET COUNT makes COUNT namespaces on one bridge and sets:
#   hosts[h]     the namespace of host h (0-based)
#   net          the hosts' /24: host h is $net.$((h + 1))
#   id           four digits that keep this run's names apart from another's
# netns_veth h and netns_port h name host h's end of its link (inside the
# namespace) and the bridge's end. An EXIT trap removes them all, then
# runs common.sh's cleanup and NETNS_UNDO (a command) if set.
#
# Names: the bridge PREFIXbrID, the namespaces PREFIXID-h, the links
# PREFIXvIDh and PREFIXpIDh, ID four digits, so that two runs differ in
# every name unless both PREFIX and ID are the same (isolate-netns.sh's
# PREFIX is is, predict-netns.sh's hp). Two runs with one PREFIX cannot
# share an ID: creating the bridge claims it (ip link add fails on a name
# that exists), and a run that finds it taken tries the next ID, so it
# never takes, nor at its exit removes, another run's bridge. OCTET only
# picks the addresses, which live inside the namespaces and behind the
# run's own bridge: two runs with the same /24 do not meet.

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
	echo "needs root, ip(8) and tc(8)" >&2
	exit 2
fi
id=
hosts=()
netns_prefix=
netns_br=

netns_veth() { echo "${netns_prefix}v$id$1"; }
netns_port() { echo "${netns_prefix}p$id$1"; }

netns_undo() {
	if [ -n "${NETNS_UNDO:-}" ]; then eval "$NETNS_UNDO" || true; fi
	for h in "${hosts[@]}"; do ip netns del "$h" 2>/dev/null || true; done
	[ -n "$netns_br" ] && ip link del "$netns_br" 2>/dev/null
	cleanup
}

netns_cluster() { # PREFIX OCTET COUNT
	local h ns n try
	netns_prefix=$1
	trap netns_undo EXIT
	n=$(($$ % 10000))
	for try in $(seq 100); do
		id=$(printf %04d "$n")
		if ip link add "${1}br$id" type bridge 2>/dev/null; then
			netns_br=${1}br$id
			break
		fi
		n=$(((n + 1) % 10000))
	done
	if [ -z "$netns_br" ]; then
		echo "netns.sh: no free bridge name ${1}brNNNN after $try tries" >&2
		exit 1
	fi
	net=10.$2.$((10#$id % 250 + 1))
	ip link set "$netns_br" up
	for h in $(seq 0 $(($3 - 1))); do
		ns=$1$id-$h
		ip netns add "$ns"
		hosts+=("$ns")
		ip link add "$(netns_veth "$h")" type veth peer name "$(netns_port "$h")"
		ip link set "$(netns_veth "$h")" netns "$ns"
		ip link set "$(netns_port "$h")" master "$netns_br"
		ip link set "$(netns_port "$h")" up
		ip -n "$ns" addr add "$net.$((h + 1))/24" dev "$(netns_veth "$h")"
		ip -n "$ns" link set "$(netns_veth "$h")" up
		ip -n "$ns" link set lo up
	done
}
