# bash completion for zkelectctl(1)                        -*- shell-script -*-
#
# Completes the options, the commands (as "zkelectctl --help" lists them, so
# that the list follows the installed zkelectctl), the roles after "wait",
# --json after "status" and "members", "--" before a switchover's ID, and
# after -n the services that have a control socket in /run/zkelectd. Words
# are read as zkelectctl reads them: bundled short options (-qn web), long
# ones abbreviated, and after a command's "--" only operands.  Installed as
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

# _zkelectctl_global_opt WORD: the option a word before the command names,
# as zkelectctl's getopt_long reads it: prints -s, -n or -t when that option
# takes the next word as its argument, nothing otherwise. A bundle (-qn)
# takes it when its last option does; -nweb and --service=web hold their
# own. Long options may be abbreviated (--serv), as getopt_long allows.
_zkelectctl_global_opt()
{
	local w=$1 o j c hits=()

	case $w in
	--*=*) return ;;
	--?*)
		for o in socket service timeout help version quiet; do
			[ "--$o" = "$w" ] && hits=("$o") && break
			[[ --$o == "$w"* ]] && hits+=("$o")
		done
		[ ${#hits[@]} -eq 1 ] || return
		case ${hits[0]} in
		socket) printf '%s\n' -s ;;
		service) printf '%s\n' -n ;;
		timeout) printf '%s\n' -t ;;
		esac
		;;
	-?*)
		for ((j = 1; j < ${#w}; j++)); do
			c=${w:j:1}
			case $c in
			s | n | t)
				# Takes the rest of the word, or the next.
				[ $((j + 1)) -eq ${#w} ] && printf '%s\n' "-$c"
				return
				;;
			esac
		done
		;;
	esac
}

_zkelectctl()
{
	local cur w i opt cmd="" optend=0 ended=0 json=0 role="" operands=0

	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}

	# Before the command: options, and the arguments of -s, -n, -t. The
	# command is the first word that is neither; "--" ends the options.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--)
			optend=1
			((i++))
			[ "$i" -lt "$COMP_CWORD" ] && cmd=${COMP_WORDS[i]}
			break
			;;
		-?*)
			opt=$(_zkelectctl_global_opt "$w")
			[ -n "$opt" ] || continue
			if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
				case $opt in
				-n) _zkelectctl_services ;;
				-s)
					compopt -o filenames 2>/dev/null
					mapfile -t COMPREPLY < <(compgen -f -- "$cur")
					;;
				esac
				return
			fi
			((i++))
			;;
		*)
			cmd=$w
			break
			;;
		esac
	done

	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]] && [ $optend -eq 0 ]; then
			_zkelectctl_reply -q --quiet -s --socket -n --service \
			    -t --timeout -h --help -V --version
		else
			_zkelectctl_reply "$(_zkelectctl_commands "${COMP_WORDS[0]}")"
		fi
		return
	fi

	# After the command (zkelectctl_command_args()): -t anywhere, --json,
	# operands; after "--" every word is an operand, options included.
	for ((i++; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ $ended -eq 0 ] && [ "$w" = -- ]; then
			ended=1
		elif [ $ended -eq 1 ] || [[ $w != -* ]]; then
			((operands++))
			role=$w
		elif [ "$w" = -t ] || [ "$w" = --timeout ]; then
			# A duration is not completed.
			[ $((i + 1)) -eq "$COMP_CWORD" ] && return
			((i++))
		elif [ "$w" = --json ]; then
			json=1
		fi
	done

	if [ $ended -eq 1 ]; then
		# An operand, whatever it begins with.
		[ "$cmd" = wait ] && [ $operands -eq 0 ] &&
		    _zkelectctl_reply leader follower promoting demoting \
		    observer unknown stopped
		return
	fi
	case $cmd in
	wait)
		if [ -z "$role" ] && [[ $cur != -* ]]; then
			_zkelectctl_reply leader follower promoting demoting \
			    observer unknown stopped
		else
			_zkelectctl_reply -t --timeout
		fi
		;;
	switchover)
		# An ID may begin with '-': "--" says it is one.
		if [ $operands -eq 0 ]; then
			_zkelectctl_reply -- -t --timeout
		else
			_zkelectctl_reply -t --timeout
		fi
		;;
	status | members)
		if [ $json -eq 0 ]; then
			_zkelectctl_reply --json -t --timeout
		else
			_zkelectctl_reply -t --timeout
		fi
		;;
	*)
		_zkelectctl_reply -t --timeout
		;;
	esac
}

complete -F _zkelectctl zkelectctl
