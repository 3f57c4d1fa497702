"""The tool-picture cache (SPEC 8.3, 8.7, 8.9, 9.3, 9.8, 10.1): `<config-stem>.tool-media/`
beside the run configuration, files named by their SHA-256, written whole through a
temp file, read only as regular files directly inside a folder that is not a link."""

import collections
import hashlib
import logging
import os
import re
import stat
import threading

from .pictures import EXT, MIME_OF_EXT

log = logging.getLogger("strata_peer.media")

NAME_RE = re.compile(r"[0-9a-f]{64}\.(png|jpg|webp)")
MEMORY_CAP = 64 << 20


def valid_name(name):
    return NAME_RE.fullmatch(name) is not None


class CacheError(OSError):
    pass


class MediaCache:
    def __init__(self, config_path):
        folder = os.path.dirname(config_path)
        stem = os.path.splitext(os.path.basename(config_path))[0]
        self.folder = os.path.join(folder, stem + ".tool-media")
        self._memory = collections.OrderedDict()
        self._memory_bytes = 0
        self._lock = threading.Lock()

    # ----- writing -----

    def _folder_for_writing(self):
        try:
            st = os.lstat(self.folder)
        except FileNotFoundError:
            os.mkdir(self.folder, 0o700)
            os.chmod(self.folder, 0o700)
            st = os.lstat(self.folder)
        if stat.S_ISLNK(st.st_mode):
            raise CacheError(f"the cache folder {self.folder} is a symbolic link: nothing is written through it")
        if not stat.S_ISDIR(st.st_mode):
            raise CacheError(f"the cache folder {self.folder} is not a folder")
        return self.folder

    def store(self, data, mime):
        """Write the picture (once) and return its media name; CacheError/OSError on failure."""
        name = f"{hashlib.sha256(data).hexdigest()}.{EXT[mime]}"
        folder = self._folder_for_writing()
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_size == len(data):
                return name
        except FileNotFoundError:
            pass
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.{threading.get_ident()}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileExistsError:
            os.unlink(tmp)
            fd = os.open(tmp, flags, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.rename(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return name

    # ----- reading -----

    def read(self, name):
        """The bytes of a cached picture, or None when it is not a regular file directly
        inside a folder that is not a link (links, FIFOs and folders count as missing)."""
        if not valid_name(name):
            return None
        try:
            st = os.lstat(self.folder)
            if not stat.S_ISDIR(st.st_mode):
                return None
            dfd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0),
                             dir_fd=dfd)
            except OSError:
                return None
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    return None
                with self._lock:
                    kept = self._memory.get(name)
                    if kept is not None and len(kept) == st.st_size:
                        self._memory.move_to_end(name)
                        return kept
                chunks = []
                while True:
                    b = os.read(fd, 1 << 20)
                    if not b:
                        break
                    chunks.append(b)
                data = b"".join(chunks)
            finally:
                os.close(fd)
        finally:
            os.close(dfd)
        self._keep(name, data)
        return data

    def exists(self, name):
        """Whether the name is a regular file in the cache now (never remembered)."""
        try:
            st = os.lstat(self.folder)
            if not stat.S_ISDIR(st.st_mode):
                return False
            st = os.lstat(os.path.join(self.folder, name))
            return stat.S_ISREG(st.st_mode)
        except OSError:
            return False

    def _keep(self, name, data):
        if len(data) > MEMORY_CAP // 4:
            return
        with self._lock:
            old = self._memory.pop(name, None)
            if old is not None:
                self._memory_bytes -= len(old)
            self._memory[name] = data
            self._memory_bytes += len(data)
            while self._memory_bytes > MEMORY_CAP:
                _, dropped = self._memory.popitem(last=False)
                self._memory_bytes -= len(dropped)


def mime_of(name):
    return MIME_OF_EXT[name.rsplit(".", 1)[1]]
