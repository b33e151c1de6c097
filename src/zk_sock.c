/*
 * Leaving a ZooKeeper server that stopped answering. libzookeeper_mt
 * notices a silent server (powered off, cut off by the network, its
 * quorum gone, a long pause) only when it has read nothing for 2/3 of the
 * session timeout, later than a leader's lease can wait: a leader that
 * renews its lease with a sync would demote, its session alive, while the
 * rest of the ensemble answers. The library has no call to leave its
 * server, and zoo_set_servers() without it would have to put the server
 * back later, which moves a third of the time right back to it. So the
 * daemon shuts the library's socket down, as a reset from the server
 * would: the library fails what was in flight with a connection loss and
 * connects to the next server of its list, and the new connection, which
 * the quorum's leader revalidates, renews the lease.
 *
 * The socket is found by its peer, the address zoo_get_current_server()
 * names, among this process's descriptors. The library may close it and
 * open another in between: the worst is a second reconnect.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zk.h"

/* "a.b.c.d:port" or "[v6]:port" (the library's form) into sa. */
static int
zk_sock_parse(const char *hostport, struct sockaddr_storage *sa)
{
	char host[INET6_ADDRSTRLEN + 2], *colon, *h = host;
	struct sockaddr_in *in = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
	long port;

	if (strlen(hostport) >= sizeof(host))
		return -1;
	(void)strcpy(host, hostport);
	if ((colon = strrchr(host, ':')) == NULL)
		return -1;
	*colon = '\0';
	port = strtol(colon + 1, NULL, 10);
	if (port <= 0 || port > 65535)
		return -1;
	memset(sa, 0, sizeof(*sa));
	if (*h == '[') {
		h++;
		if (colon[-1] != ']')
			return -1;
		colon[-1] = '\0';
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, h, &in6->sin6_addr) == 1 ? 0 : -1;
	}
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, h, &in->sin_addr) == 1 ? 0 : -1;
}

static int
zk_sock_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
	const struct sockaddr_in *b4 = (const struct sockaddr_in *)b;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;

	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return a4->sin_port == b4->sin_port &&
		    a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return a->ss_family == AF_INET6 && a6->sin6_port == b6->sin6_port &&
	    memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr)) == 0;
}

/* Whether descriptor fd is a stream socket connected to peer. */
static int
zk_sock_is(int fd, const struct sockaddr_storage *peer)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	struct stat st;
	int type;
	socklen_t tlen = sizeof(type);

	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == -1 ||
	    type != SOCK_STREAM ||
	    getpeername(fd, (struct sockaddr *)&sa, &len) == -1)
		return 0;
	return zk_sock_same(&sa, peer);
}

int
zk_sock_shutdown(const char *hostport)
{
	struct sockaddr_storage peer;
	struct dirent *de;
	DIR *dir;
	long fd;
	int done = -1;

	if (hostport == NULL || zk_sock_parse(hostport, &peer) == -1 ||
	    (dir = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		if ((fd = strtol(de->d_name, NULL, 10)) <= 2 ||
		    fd == dirfd(dir) || !zk_sock_is((int)fd, &peer))
			continue;
		if (shutdown((int)fd, SHUT_RDWR) == 0)
			done = 0;
	}
	(void)closedir(dir);
	return done;
}
