/* What the daemon and zkelectctl agree on about the control socket. */
#ifndef ZKELECTD_PROTO_H
#define ZKELECTD_PROTO_H

#define PROTO_MAX_LINE 1024
#define PROTO_RUNDIR "/run/zkelectd"

#endif
