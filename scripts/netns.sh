# Sourced by the scripts that stand network namespaces in for hosts
# (isolate-netns.sh, predict-netns.sh), after common.sh. netns_cluster
# PREFIX OCTET COUNT makes COUNT namespaces on one bridge and sets:
#   hosts[h]     the namespace of host h (0-based)
#   net          the hosts' /24: host h is $net.$((h + 1))
#   id           a number that keeps this run's names apart from another's
# netns_veth h and netns_port h name host h's end of its link (inside the
# namespace) and the bridge's end. An EXIT trap removes them all, then
# runs common.sh's cleanup and NETNS_UNDO (a command) if set.

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
	echo "needs root, ip(8) and tc(8)" >&2
	exit 2
fi
id=$(($$ % 10000))
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
	local h ns
	netns_prefix=$1
	net=10.$2.$((id % 250 + 1))
	netns_br=${1}br$id
	trap netns_undo EXIT
	ip link add "$netns_br" type bridge
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
