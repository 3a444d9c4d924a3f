/* ns_download: one-shot HTTP(S) downloads and reachability probes with libcurl. */
#include "assets/ns_download.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A transfer that moves less than 1 KiB/s for this long is abandoned (stalled link). */
#define NS_DL_LOW_SPEED_BYTES 1024L
#define NS_DL_LOW_SPEED_SECONDS 30L

typedef struct dl_sink {
    int fd;
    int write_errno;
    ns_line_fn log;
    void *log_user;
    const char *url;
    int last_decile; /* progress printed in 10% steps */
} dl_sink;

static size_t dl_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    dl_sink *s = userdata;
    size_t total = size * nmemb, done = 0;
    while (done < total) {
        ssize_t n = write(s->fd, ptr + done, total - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            s->write_errno = errno;
            return 0; /* makes curl stop with CURLE_WRITE_ERROR */
        }
        done += (size_t)n;
    }
    return total;
}

static int dl_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    dl_sink *s = userdata;
    if (!s->log || dltotal <= 0 || dltotal < 8 * 1024 * 1024)
        return 0; /* only large files get progress lines */
    int decile = (int)(dlnow * 10 / dltotal);
    if (decile > s->last_decile && decile < 10) {
        s->last_decile = decile;
        char line[64];
        snprintf(line, sizeof line, "  %d%% of %.1f MB", decile * 10, (double)dltotal / 1e6);
        s->log(s->log_user, line);
    }
    return 0;
}

static int is_unreachable(CURLcode c)
{
    return c == CURLE_COULDNT_RESOLVE_HOST || c == CURLE_COULDNT_RESOLVE_PROXY ||
           c == CURLE_COULDNT_CONNECT || c == CURLE_OPERATION_TIMEDOUT ||
           c == CURLE_SSL_CONNECT_ERROR || c == CURLE_RECV_ERROR || c == CURLE_SEND_ERROR;
}

/* Options shared by downloads and probes: fail fast, follow redirects, http(s) only. */
static int setup_common(CURL *h, const char *url, long connect_timeout_s, char *errbuf)
{
    int bad = 0;
    bad |= curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, connect_timeout_s) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, NS_DL_LOW_SPEED_BYTES) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, NS_DL_LOW_SPEED_SECONDS) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_USERAGENT, "normsweep-assets/1") != CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500
    bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK;
#endif
    return bad;
}

static int curl_failure(CURLcode c, const char *errbuf, const char *url, long connect_timeout_s,
                        int *unreachable, ns_err *err)
{
    *unreachable = is_unreachable(c);
    const char *why = errbuf[0] ? errbuf : curl_easy_strerror(c);
    if (c == CURLE_OPERATION_TIMEDOUT)
        return ns_fail(err, NS_ERR_IO, "%s: %s (connect timeout %ld s, stall limit %ld s)", url,
                       why, connect_timeout_s, NS_DL_LOW_SPEED_SECONDS);
    return ns_fail(err, NS_ERR_IO, "%s: %s", url, why);
}

int ns_download_file(const char *url, const char *dest, long connect_timeout_s,
                     ns_line_fn log, void *log_user,
                     int *unreachable, ns_err *err)
{
    *unreachable = 0;
    char errbuf[CURL_ERROR_SIZE] = "";
    int rc = NS_OK;
    dl_sink sink = {.fd = -1, .log = log, .log_user = log_user, .url = url, .last_decile = 0};
    CURL *h = curl_easy_init();
    if (!h)
        return ns_fail(err, NS_ERR_LIBRARY, "%s: curl_easy_init failed", url);
    sink.fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (sink.fd < 0) {
        rc = ns_fail(err, NS_ERR_IO, "%s: cannot create: %s", dest, strerror(errno));
        goto done;
    }
    int bad = setup_common(h, url, connect_timeout_s, errbuf);
    bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, dl_write) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, dl_progress) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_XFERINFODATA, &sink) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L) != CURLE_OK;
    if (bad) {
        rc = ns_fail(err, NS_ERR_LIBRARY, "%s: libcurl rejected an option", url);
        goto done;
    }
    CURLcode c = curl_easy_perform(h);
    if (c == CURLE_WRITE_ERROR && sink.write_errno) {
        rc = ns_fail(err, NS_ERR_IO, "%s: write failed: %s", dest, strerror(sink.write_errno));
        goto done;
    }
    if (c != CURLE_OK) {
        rc = curl_failure(c, errbuf, url, connect_timeout_s, unreachable, err);
        goto done;
    }
    if (fsync(sink.fd) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "%s: fsync failed: %s", dest, strerror(errno));
        goto done;
    }
done:
    if (sink.fd >= 0 && close(sink.fd) != 0 && rc == NS_OK)
        rc = ns_fail(err, NS_ERR_IO, "%s: close failed: %s", dest, strerror(errno));
    if (rc != NS_OK && sink.fd >= 0)
        unlink(dest);
    curl_easy_cleanup(h);
    return rc;
}

int ns_download_probe(const char *url, long connect_timeout_s, int *unreachable, ns_err *err)
{
    *unreachable = 0;
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *h = curl_easy_init();
    if (!h)
        return ns_fail(err, NS_ERR_LIBRARY, "%s: curl_easy_init failed", url);
    int rc = NS_OK;
    int bad = setup_common(h, url, connect_timeout_s, errbuf);
    bad |= curl_easy_setopt(h, CURLOPT_NOBODY, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT, 2 * connect_timeout_s) != CURLE_OK;
    if (bad) {
        rc = ns_fail(err, NS_ERR_LIBRARY, "%s: libcurl rejected an option", url);
    } else {
        CURLcode c = curl_easy_perform(h);
        if (c != CURLE_OK)
            rc = curl_failure(c, errbuf, url, connect_timeout_s, unreachable, err);
    }
    curl_easy_cleanup(h);
    return rc;
}

void ns_download_host(const char *url, char *out, size_t len)
{
    out[0] = '\0';
    const char *p = strstr(url, "://");
    if (!p)
        return;
    p += 3;
    size_t n = strcspn(p, "/?#");
    if (n >= len)
        n = len - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}
