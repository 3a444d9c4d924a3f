"""files: how the report writes a file. Each goes to a temporary beside it (NAME.tmp.PID), is
flushed to disk and renamed into place only when complete, so a report that fails or is stopped
midway (a full disk, SIGTERM) leaves the previous file whole, never a truncated one, and no
temporary (a SIGKILLed report's temporaries are removed by the next report into the directory:
clean_stale)."""
import os
import re

_TMP = re.compile(r"^(.+)\.tmp\.([0-9]+)$")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def clean_stale(out, names):
    """Remove out's temporaries NAME.tmp.PID of a file the report writes (names: a predicate on
    NAME) whose process is gone; return the paths removed."""
    removed = []
    try:
        entries = os.listdir(out)
    except FileNotFoundError:
        return removed
    for e in entries:
        m = _TMP.match(e)
        if m and names(m.group(1)) and not _alive(int(m.group(2))):
            path = os.path.join(out, e)
            try:
                os.unlink(path)
                removed.append(path)
            except FileNotFoundError:
                pass
    return removed


def replace(path, write):
    """Write path through a temporary: write(f) fills a binary file object."""
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, path) from exc  # the file, not its temporary
        raise


def write_text(path, text):
    replace(path, lambda f: f.write(text.encode("utf-8")))


def savefig(fig, path, **kw):
    """fig.savefig(path, **kw) through a temporary; the format is path's extension."""
    fmt = os.path.splitext(path)[1][1:]
    replace(path, lambda f: fig.savefig(f, format=fmt, **kw))
