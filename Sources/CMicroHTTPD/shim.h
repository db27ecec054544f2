/* libmicrohttpd from Debian (0.9.75 on bookworm, 1.0 on trixie): the HTTP parser and the
   connection handling of the parent's page. Swift cannot call C's variadic functions, so
   the four this project needs are wrapped here, with nothing else in them. */
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* A daemon on an already bound, listening socket (ours: its error is known, port 0 works),
   with no thread of its own (MHD_USE_EPOLL: one epoll fd for the caller's loop), every
   connection, per-address, time and memory bound given. */
static inline struct MHD_Daemon *ph_mhd_start(unsigned int flags, int listen_fd,
        MHD_AccessHandlerCallback handler, void *handler_cls,
        MHD_RequestCompletedCallback completed, void *completed_cls,
        MHD_NotifyConnectionCallback connection, void *connection_cls,
        unsigned int connection_limit, unsigned int per_ip_limit,
        unsigned int timeout_seconds, size_t memory_limit) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, connection, connection_cls,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_END);
}

/* The daemon's epoll fd (-1: none). */
static inline int ph_mhd_epoll_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info == NULL ? -1 : info->epoll_fd;
}

/* A connection's socket (-1: not known): a request over its time is shut down through it. */
static inline int ph_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

/* The client's address as text (IPv4, or IPv6 without brackets); "" when not known. */
static inline void ph_mhd_client_address(struct MHD_Connection *connection, char *text, size_t size) {
    text[0] = '\0';
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)address)->sin_addr, text, (socklen_t)size);
    } else if (address->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)address)->sin6_addr;
        /* An IPv4 client on the dual-stack socket: its plain IPv4 text. */
        if (IN6_IS_ADDR_V4MAPPED(a6)) inet_ntop(AF_INET, &a6->s6_addr[12], text, (socklen_t)size);
        else inet_ntop(AF_INET6, a6, text, (socklen_t)size);
    }
}
