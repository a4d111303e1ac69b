/*
 * TLS handshake load for the `tls` benchmark suite (bench/tls.ts builds it with cc and libssl).
 *
 *   tls-handshakes <port> <seconds> <workers> <full|resumed|once> <names-file>
 *
 * Connects to 127.0.0.1:<port> over and over, each connection one TLS 1.3 handshake with SNI set
 * to the next name of <names-file> (one per line), then closes. <workers> processes run side by
 * side (the caller pins them to a core with taskset). Prints one line:
 *
 *   full <n> resumed <n> unresumed <n> failed <n> seconds <s>
 *
 * preceded by a line "primed" when the timed part starts (after the resumed mode's sessions were
 * obtained), so the caller measures the server's CPU over the timed part only.
 *
 * - full: new sessions, for <seconds>; each worker cycles through its share of the names.
 * - resumed: each worker first obtains a session (ticket) for each of up to 64 names of its share
 *   (not timed), then for <seconds> resumes them; a handshake the server did not resume counts
 *   as "unresumed".
 * - once: full handshakes, every name exactly once (split between the workers), timed until the
 *   last one: the first pass, where the edge loads each certificate from the database.
 *
 * Why not `openssl s_time`: it sets no SNI, so the edge's certificate lookup would never run.
 * Why C and not a Node.js client: the client must cost the client core less than a handshake
 * costs the server's, or the figure measures the client. Certificates are not verified here
 * (that costs the client, not the server); bench/tls.ts checks them separately.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_NAMES 100000
#define RESUMED_NAMES_PER_WORKER 64

static char *names[MAX_NAMES];
/* Workers say they are ready (sessions obtained) on one pipe and wait for the start on another. */
static int ready_pipe[2], start_pipe[2];

static void wait_for_start(void) {
  char byte = 'r';
  if (write(ready_pipe[1], &byte, 1) != 1 || read(start_pipe[0], &byte, 1) != 1) _exit(3);
}
static int name_count = 0;
static int port = 0;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int tcp_connect(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct timeval timeout = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/*
 * One handshake with SNI `name`, offering `session` when given. Returns 1 (new session),
 * 2 (resumed) or 0 (failed). With `keep`, waits for the session ticket (TLS 1.3 sends it after
 * the handshake) by sending a request and reading the answer, and returns the session in *keep.
 */
static int handshake(SSL_CTX *ctx, const char *name, SSL_SESSION *session, SSL_SESSION **keep) {
  int fd = tcp_connect();
  if (fd < 0) return 0;
  SSL *ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  SSL_set_tlsext_host_name(ssl, name);
  if (session) SSL_set_session(ssl, session);
  int result = 0;
  if (SSL_connect(ssl) == 1) {
    result = SSL_session_reused(ssl) ? 2 : 1;
    if (keep) {
      char request[512];
      int length = snprintf(request, sizeof request,
                            "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", name);
      char buffer[4096];
      if (SSL_write(ssl, request, length) > 0)
        while (SSL_read(ssl, buffer, sizeof buffer) > 0) {
        }
      *keep = SSL_get1_session(ssl);
      if (!*keep) result = 0;
    }
    SSL_shutdown(ssl);
  }
  SSL_free(ssl);
  close(fd);
  return result;
}

static void run_worker(int worker, int workers, double seconds, const char *mode, int out) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  long full = 0, resumed = 0, unresumed = 0, failed = 0;
  double started, elapsed;
  if (strcmp(mode, "resumed") == 0) {
    /*
     * Kept serialized and decoded for each handshake: OpenSSL's client does not offer a TLS 1.3
     * session object a second time, while the edge accepts a ticket any number of times while
     * it is valid (browsers and HTTP clients keep the newest of the tickets they receive).
     */
    unsigned char *sessions[RESUMED_NAMES_PER_WORKER];
    int lengths[RESUMED_NAMES_PER_WORKER];
    int indexes[RESUMED_NAMES_PER_WORKER];
    int count = 0;
    for (int k = 0; k < RESUMED_NAMES_PER_WORKER; k++) {
      /* This worker's share of the names; with fewer names than workers, one of them. */
      int i = worker + k * workers;
      if (i >= name_count) {
        if (k > 0) break;
        i = worker % name_count;
      }
      indexes[count] = i;
      SSL_SESSION *session = NULL;
      if (handshake(ctx, names[i], NULL, &session)) {
        sessions[count] = NULL;
        lengths[count] = i2d_SSL_SESSION(session, &sessions[count]);
        SSL_SESSION_free(session);
        if (lengths[count] > 0) count++;
        else failed++;
      } else {
        failed++;
      }
    }
    wait_for_start();
    started = now();
    for (long n = 0; count > 0 && now() - started < seconds; n++) {
      const unsigned char *der = sessions[n % count];
      SSL_SESSION *session = d2i_SSL_SESSION(NULL, &der, lengths[n % count]);
      int result = session ? handshake(ctx, names[indexes[n % count]], session, NULL) : 0;
      SSL_SESSION_free(session);
      if (result == 2) resumed++;
      else if (result == 1) unresumed++;
      else failed++;
    }
    elapsed = now() - started;
  } else if (strcmp(mode, "once") == 0) {
    wait_for_start();
    started = now();
    for (int i = worker; i < name_count; i += workers) {
      if (handshake(ctx, names[i], NULL, NULL)) full++;
      else failed++;
    }
    elapsed = now() - started;
  } else {
    wait_for_start();
    started = now();
    for (long n = 0; now() - started < seconds; n++) {
      if (handshake(ctx, names[(worker + n * workers) % name_count], NULL, NULL)) full++;
      else failed++;
    }
    elapsed = now() - started;
  }
  char line[256];
  int length = snprintf(line, sizeof line, "%ld %ld %ld %ld %.6f\n", full, resumed, unresumed, failed, elapsed);
  if (write(out, line, length) != length) _exit(3);
  SSL_CTX_free(ctx);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s <port> <seconds> <workers> <full|resumed|once> <names-file>\n", argv[0]);
    return 2;
  }
  port = atoi(argv[1]);
  double seconds = atof(argv[2]);
  int workers = atoi(argv[3]);
  const char *mode = argv[4];
  if (port <= 0 || seconds <= 0 || workers <= 0 ||
      (strcmp(mode, "full") && strcmp(mode, "resumed") && strcmp(mode, "once"))) {
    fprintf(stderr, "invalid arguments\n");
    return 2;
  }
  FILE *file = fopen(argv[5], "r");
  if (!file) {
    perror(argv[5]);
    return 2;
  }
  char line[300];
  while (name_count < MAX_NAMES && fgets(line, sizeof line, file)) {
    line[strcspn(line, "\r\n")] = 0;
    if (line[0]) names[name_count++] = strdup(line);
  }
  fclose(file);
  if (name_count == 0) {
    fprintf(stderr, "no names in %s\n", argv[5]);
    return 2;
  }
  int pipes[2];
  if (pipe(pipes) != 0 || pipe(ready_pipe) != 0 || pipe(start_pipe) != 0) return 3;
  for (int w = 0; w < workers; w++) {
    pid_t pid = fork();
    if (pid == 0) {
      close(pipes[0]);
      run_worker(w, workers, seconds, mode, pipes[1]);
      _exit(0);
    }
  }
  close(pipes[1]);
  /* Every worker ready: "primed" tells the caller the timed part starts now. */
  for (int w = 0; w < workers; w++) {
    char byte;
    if (read(ready_pipe[0], &byte, 1) != 1) return 3;
  }
  printf("primed\n");
  fflush(stdout);
  for (int w = 0; w < workers; w++) {
    if (write(start_pipe[1], "s", 1) != 1) return 3;
  }
  long full = 0, resumed = 0, unresumed = 0, failed = 0;
  double elapsed = 0;
  FILE *in = fdopen(pipes[0], "r");
  long f, r, u, x;
  double e;
  int reported = 0;
  while (fscanf(in, "%ld %ld %ld %ld %lf", &f, &r, &u, &x, &e) == 5) {
    full += f;
    resumed += r;
    unresumed += u;
    failed += x;
    if (e > elapsed) elapsed = e;
    reported++;
  }
  int status = 0;
  while (wait(&status) > 0) {
  }
  if (reported != workers) {
    fprintf(stderr, "%d of %d workers reported\n", reported, workers);
    return 3;
  }
  printf("full %ld resumed %ld unresumed %ld failed %ld seconds %.6f\n", full, resumed, unresumed, failed, elapsed);
  return 0;
}
