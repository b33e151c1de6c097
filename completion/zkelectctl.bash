# bash completion for zkelectctl(1)                        -*- shell-script -*-
#
# Completes the options, the commands (as "zkelectctl --help" lists them, so
# that the list follows the installed zkelectctl), the roles after "wait",
# --json after "status" and "members", and after -n the services that have
# a control socket in /run/zkelectd.  Installed as
# /usr/share/bash-completion/completions/zkelectctl; works without the
# bash-completion package too: source this file.

# Where zkelectd's sockets are (zkelectctl's PROTO_RUNDIR).
_zkelectctl_rundir=/run/zkelectd

# _zkelectctl_reply WORDS...: the words that start with $cur.
_zkelectctl_reply()
{
	mapfile -t COMPREPLY < <(compgen -W "$*" -- "$cur")
}

_zkelectctl_commands()
{
	"$1" --help 2>/dev/null | awk '
		/^Commands:/ { on = 1; next }
		/^[^ ]/ { on = 0 }
		on && /^  [a-z]/ { print $1 }'
}

_zkelectctl_services()
{
	local f names=()

	for f in "$_zkelectctl_rundir"/*.sock; do
		[ -S "$f" ] || continue
		f=${f##*/}
		names+=("${f%.sock}")
	done
	_zkelectctl_reply "${names[@]}"
}

_zkelectctl()
{
	local cur prev cmd w i role=""

	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=""
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	-n | --service)
		_zkelectctl_services
		return
		;;
	-s | --socket)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return
		;;
	-t | --timeout)
		return
		;;
	esac

	# The command is the first word that is neither an option nor the
	# argument of one.
	cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-n | --service | -s | --socket | -t | --timeout) ((i++)) ;;
		-*) ;;
		*)
			cmd=$w
			break
			;;
		esac
	done

	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			_zkelectctl_reply -q --quiet -s --socket -n --service \
			    -t --timeout -h --help -V --version
		else
			_zkelectctl_reply "$(_zkelectctl_commands "${COMP_WORDS[0]}")"
		fi
		return
	fi

	case $cmd in
	wait)
		for ((i++; i < COMP_CWORD; i++)); do
			w=${COMP_WORDS[i]}
			case $w in
			-t | --timeout) ((i++)) ;;
			-*) ;;
			*) role=$w ;;
			esac
		done
		if [ -z "$role" ] && [[ $cur != -* ]]; then
			_zkelectctl_reply leader follower promoting demoting \
			    observer unknown stopped
		else
			_zkelectctl_reply -t --timeout
		fi
		;;
	status | members)
		_zkelectctl_reply --json -t --timeout
		;;
	*)
		_zkelectctl_reply -t --timeout
		;;
	esac
}

complete -F _zkelectctl zkelectctl
