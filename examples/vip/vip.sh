#!/bin/sh
# vip.sh -- a floating IP address that follows the leader.
#
# One script serves as both the promote and the demote hook of zkelectd: it
# reads the event from ZKELECT_EVENT, which zkelectd sets for every hook.
#   promote: add ADDRESS/PREFIX to DEVICE, then announce it with gratuitous
#            ARP (arping -U, Debian package iputils-arping) so that hosts and
#            switches on the segment forget the previous leader's MAC address.
#   demote:  remove the address from DEVICE.
# Both are idempotent: adding an address that is already there, or removing
# one that is not (the demote at start, reason "startup", on a node that
# never held it; a device that does not exist), succeeds.
#
# Wiring: install it as /usr/local/lib/zkelectd/vip.sh (mode 0755), then in
# /etc/zkelectd/SERVICE.conf (see zkelectd.conf in this folder):
#   [hooks]
#   promote = /usr/local/lib/zkelectd/vip.sh 192.0.2.10/24 eth0
#   demote = /usr/local/lib/zkelectd/vip.sh 192.0.2.10/24 eth0
# The address and the device may also come from the environment as VIP and
# DEV (arguments win).  ARPING_COUNT (default 3) sets how many gratuitous
# ARP packets are sent, one a second: promote ends only after the last (and
# zkelectd reports "leader" only then), so each adds a second to a failover;
# 0 sends none.
#
# Needs CAP_NET_ADMIN (ip) and CAP_NET_RAW (arping): root, or the hardened
# drop-in in ../hardening.  A failed gratuitous ARP is logged but does not
# fail the promote (the address is up; peers still learn it, only later);
# a failed "ip addr add" does.  IPv6 addresses are added and removed, with
# no arping (the kernel announces them itself).
#
# Exit status: 0 done, 1 the address could not be added or removed, 2 usage.
set -u

prog=vip.sh
VIP=${1:-${VIP:-}}
DEV=${2:-${DEV:-}}
ARPING_COUNT=${ARPING_COUNT:-3}
event=${ZKELECT_EVENT:-}

say() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

usage() {
	say "$*"
	say "usage: ZKELECT_EVENT=promote|demote $prog ADDRESS/PREFIX DEVICE"
	exit 2
}

[ -n "$VIP" ] || usage "no address (argument 1 or VIP)"
[ -n "$DEV" ] || usage "no device (argument 2 or DEV)"
case $VIP in
*/*) ;;
*) usage "address '$VIP' has no prefix length (e.g. 192.0.2.10/24)" ;;
esac
case $ARPING_COUNT in
'' | *[!0-9]*) usage "ARPING_COUNT '$ARPING_COUNT' is not a number" ;;
esac
addr=${VIP%/*}

# present: whether DEV carries the address now (status 2: no such device).
present() {
	if ! out=$(ip -o addr show dev "$DEV" to "$addr" 2>&1); then
		if ip link show dev "$DEV" >/dev/null 2>&1; then
			say "ip addr show dev $DEV: $out"
			return 3
		fi
		return 2
	fi
	[ -n "$out" ]
}

promote() {
	present
	case $? in
	0) say "$VIP already on $DEV" ;;
	1)
		if ! err=$(ip addr add "$VIP" dev "$DEV" 2>&1); then
			# Lost a race with another add of the same address?
			if ! present; then
				say "ip addr add $VIP dev $DEV: $err"
				return 1
			fi
		fi
		say "added $VIP to $DEV"
		;;
	2)
		say "no device $DEV: cannot add $VIP"
		return 1
		;;
	*) return 1 ;;
	esac
	case $addr in
	*:*) return 0 ;;
	esac
	[ "$ARPING_COUNT" -gt 0 ] || return 0
	if ! err=$(arping -q -U -c "$ARPING_COUNT" -I "$DEV" "$addr" 2>&1); then
		say "arping -U -I $DEV $addr failed: $err (the address is up)"
	fi
	return 0
}

demote() {
	present
	case $? in
	0)
		if ! err=$(ip addr del "$VIP" dev "$DEV" 2>&1); then
			if present; then
				say "ip addr del $VIP dev $DEV: $err"
				return 1
			fi
		fi
		say "removed $VIP from $DEV"
		;;
	1) say "$VIP not on $DEV (nothing to remove)" ;;
	2) say "no device $DEV: $VIP cannot be on it" ;;
	*) return 1 ;;
	esac
	return 0
}

case $event in
promote) promote ;;
demote) demote ;;
*) usage "ZKELECT_EVENT is '$event'; this hook handles promote and demote" ;;
esac
