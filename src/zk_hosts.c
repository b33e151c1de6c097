/*
 * ZooKeeper host lists (zookeeper.hosts): compared, resolved and turned
 * into the addresses the client library is given. The client library
 * (3.8) splits each entry at its last colon and tells servers apart by
 * address alone; what is here follows it. Resolution may wait on DNS:
 * zk_hosts_numeric() runs on resolve.c's threads, never on the loop.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "zk.h"

/* Whether every entry of list a (host:port, ...) is one of list b: the
 * whole entry, or its host alone. */
static int
zk_hosts_within(const char *a, const char *b, int ports)
{
	const char *s, *e, *c, *t, *te, *tc;

	for (s = a; *s != '\0'; s = *e == ',' ? e + 1 : e) {
		e = strchrnul(s, ',');
		for (c = e; !ports && c > s && c[-1] != ':'; c--)
			;
		for (t = b; *t != '\0'; t = *te == ',' ? te + 1 : te) {
			te = strchrnul(t, ',');
			for (tc = te; !ports && tc > t && tc[-1] != ':'; tc--)
				;
			if (tc - t == c - s && memcmp(t, s, (size_t)(c - s)) == 0)
				break;
		}
		if (*t == '\0')
			return 0;
	}
	return 1;
}

/*
 * The client library tells its servers apart by address only, never by
 * port (addrvec_contains): a new list on the same hosts is "no change" to
 * it, and it would go on using the old ports without a word.
 */
int
zk_hosts_same(const char *a, const char *b, int ports)
{
	return zk_hosts_within(a, b, ports) && zk_hosts_within(b, a, ports);
}

/* One resolved server: its address (of family af) and port. */
struct zk_ep {
	int af;
	unsigned char addr[16];
	uint16_t port;
};

/*
 * Every address of a host:port list (the port after the last colon, an
 * IPv6 address maybe in brackets), as getaddrinfo() gives them to the
 * client library; -1 when an entry does not resolve, with why in why (when
 * given). Safe in any thread: it touches nothing but its arguments.
 */
static int
zk_resolve(const char *list, struct zk_ep **out, int *n, char *why,
    size_t len)
{
	struct addrinfo hints, *res, *ai;
	const char *s, *e, *c;
	char host[256], port[16];
	size_t hl;
	int rc;

	*out = NULL;
	*n = 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	for (s = list; *s != '\0'; s = *e == ',' ? e + 1 : e) {
		e = strchrnul(s, ',');
		for (c = e; c > s && c[-1] != ':'; c--)
			;
		if (c == s || (size_t)(e - c) >= sizeof(port))
			goto bad;
		hl = (size_t)(c - 1 - s);
		if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
			s++;
			hl -= 2;
		}
		if (hl == 0 || hl >= sizeof(host))
			goto bad;
		memcpy(host, s, hl);
		host[hl] = '\0';
		memcpy(port, c, (size_t)(e - c));
		port[e - c] = '\0';
		if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
			if (why != NULL)
				(void)snprintf(why, len, "%s does not resolve "
				    "(%s)", host, rc == EAI_SYSTEM ?
				    strerror(errno) : gai_strerror(rc));
			goto fail;
		}
		for (ai = res; ai != NULL; ai = ai->ai_next) {
			struct zk_ep *ep;

			if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
				continue;
			*out = xreallocarray(*out, (size_t)*n + 1,
			    sizeof(**out));
			ep = &(*out)[(*n)++];
			memset(ep, 0, sizeof(*ep));
			ep->af = ai->ai_family;
			if (ai->ai_family == AF_INET) {
				const struct sockaddr_in *sin =
				    (const struct sockaddr_in *)ai->ai_addr;

				memcpy(ep->addr, &sin->sin_addr, 4);
				ep->port = ntohs(sin->sin_port);
			} else {
				const struct sockaddr_in6 *sin6 =
				    (const struct sockaddr_in6 *)ai->ai_addr;

				memcpy(ep->addr, &sin6->sin6_addr, 16);
				ep->port = ntohs(sin6->sin6_port);
			}
		}
		freeaddrinfo(res);
	}
	return 0;
bad:
	if (why != NULL)
		(void)snprintf(why, len, "an entry is not host:port");
fail:
	free(*out);
	*out = NULL;
	*n = 0;
	return -1;
}

/* 1 when every host of the list is an address: resolving it asks no DNS. */
int
zk_hosts_are_addresses(const char *list)
{
	unsigned char buf[16];
	const char *s, *e, *c;
	char host[256];
	size_t hl;

	for (s = list; *s != '\0'; s = *e == ',' ? e + 1 : e) {
		e = strchrnul(s, ',');
		for (c = e; c > s && c[-1] != ':'; c--)
			;
		if (c == s)
			return 0;
		hl = (size_t)(c - 1 - s);
		if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
			s++;
			hl -= 2;
		}
		if (hl == 0 || hl >= sizeof(host))
			return 0;
		memcpy(host, s, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET, host, buf) != 1 &&
		    inet_pton(AF_INET6, host, buf) != 1)
			return 0;
	}
	return 1;
}

/*
 * The client library (3.8) tells its servers apart by address alone:
 * addrvec_contains() compares sin_addr or sin6_addr, never the port. A
 * new list whose addresses are the old ones is "no change" to it, and a
 * server it is connected to stays its server, on the old port, while its
 * address is in the new list; neither is said. So no address may be in
 * both lists on other ports, however each list spells it (127.0.0.1 and
 * localhost are one address).
 */
static const char *
zk_eps_clash(const struct zk_ep *ea, int na, const struct zk_ep *eb, int nb,
    char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	int i, j;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++) {
			if (ea[i].af != eb[j].af || memcmp(ea[i].addr,
			    eb[j].addr, ea[i].af == AF_INET ? 4 : 16) != 0 ||
			    ea[i].port == eb[j].port)
				continue;
			if (inet_ntop(ea[i].af, ea[i].addr, ip,
			    sizeof(ip)) == NULL)
				(void)snprintf(ip, sizeof(ip), "?");
			(void)snprintf(buf, len, "the same hosts on other ports "
			    "(%s: port %u asked for, %u in use), which the "
			    "ZooKeeper client cannot tell apart (it compares "
			    "addresses only): restart to apply it", ip,
			    (unsigned)eb[j].port, (unsigned)ea[i].port);
			return buf;
		}
	return NULL;
}

const char *
zk_hosts_clash(const char *a, const char *b, char *buf, size_t len)
{
	struct zk_ep *ea, *eb;
	const char *why;
	int na, nb;

	/* Each sets its list to NULL when it fails. */
	if (zk_resolve(a, &ea, &na, NULL, 0) == -1 ||
	    zk_resolve(b, &eb, &nb, NULL, 0) == -1) {
		free(ea);
		if (zk_hosts_same(a, b, 0) && !zk_hosts_same(a, b, 1)) {
			(void)snprintf(buf, len, "the same hosts on other "
			    "ports, which the ZooKeeper client cannot tell "
			    "apart (it compares addresses only): restart to "
			    "apply it");
			return buf;
		}
		return NULL;
	}
	why = zk_eps_clash(ea, na, eb, nb, buf, len);
	free(ea);
	free(eb);
	return why;
}

/*
 * List b as the addresses it resolves to ("10.0.0.1:2181,::1:2181", the
 * form the client library parses: the port after the last colon), for a
 * move from list a: NULL with why in buf when an entry of b does not
 * resolve or an address of a is in b on another port. It may wait on DNS
 * for as long as the resolver's own timeouts: never call it on the event
 * loop (resolve.c runs it on a thread of its own). The client library,
 * given addresses, resolves nothing.
 */
char *
zk_hosts_numeric(const char *a, const char *b, char *buf, size_t len)
{
	struct zk_ep *ea, *eb;
	char ip[INET6_ADDRSTRLEN], *list = NULL, *more;
	int na, nb, i;

	if (zk_resolve(b, &eb, &nb, buf, len) == -1)
		return NULL;
	if (nb == 0) {
		(void)snprintf(buf, len, "no IPv4 or IPv6 address");
		free(eb);
		return NULL;
	}
	if (zk_resolve(a, &ea, &na, NULL, 0) == 0) {
		if (zk_eps_clash(ea, na, eb, nb, buf, len) != NULL) {
			free(ea);
			free(eb);
			return NULL;
		}
		free(ea);
	} else if (zk_hosts_clash(a, b, buf, len) != NULL) {
		free(eb);
		return NULL;
	}
	for (i = 0; i < nb; i++) {
		if (inet_ntop(eb[i].af, eb[i].addr, ip, sizeof(ip)) == NULL)
			fatal("inet_ntop");
		(void)xasprintf(&more, "%s%s%s:%u", list != NULL ? list : "",
		    list != NULL ? "," : "", ip, (unsigned)eb[i].port);
		free(list);
		list = more;
	}
	free(eb);
	return list;
}
