/**
 * The Python that `kit world attach` writes for an attached app (python.ts writes the files):
 * `SITECUSTOMIZE_PY`, first on PYTHONPATH, which Python imports at start-up; it watches for the
 * modules `PATCHES_PY` prepares and loads that only when the app imports one of them. Kept here
 * as strings so that the compiled CLI and its bundle carry them; test/attach/languages/python.test.ts
 * runs them under Debian's Python. Template literals: no backtick or dollar-brace in the Python.
 */

/** Written as `<temp>/python/sitecustomize.py`; finds the rest in `<temp>/python-attach/`. */
export const SITECUSTOMIZE_PY = String.raw`
# Written by 'kit world attach' (twinkit: sdk/attach/languages/python.ts) for one run; removed
# when the command ends. The usual variables (HTTPS_PROXY, SSL_CERT_FILE, REQUESTS_CA_BUNDLE)
# reach most Python clients; ../python-attach/kit_attach_patches.py prepares those that ignore
# them, loaded when, and only if, the app imports one. Then the sitecustomize Python would have
# run without kit runs (the next one on sys.path). Every Python process the app starts runs this
# file, so it imports nothing.


def _kit_attach():
    import os
    import sys

    here = os.path.dirname(os.path.realpath(__file__))
    folder = os.path.join(os.path.dirname(here), "python-attach")
    watched = {"urllib3", "aiohttp"}
    if os.path.exists(os.path.join(folder, "world-ca.pem")):
        watched.update(("stripe", "httplib2", "certifi"))
    loaded = {}
    busy = set()
    # importlib's own finder of modules on a path, taken from sys.meta_path: importing importlib.util costs some 10 ms.
    path_finder = next((f for f in sys.meta_path if getattr(f, "__name__", None) == "PathFinder"), None)
    if path_finder is None:
        sys.stderr.write("kit attach (python): this Python has no PathFinder; only the usual variables apply\n")
        return

    def from_spec(spec):
        """What importlib.util.module_from_spec and exec_module do, for a plain module."""
        module = type(sys)(spec.name)
        module.__spec__, module.__loader__, module.__file__, module.__package__ = spec, spec.loader, spec.origin, ""
        if spec.cached is not None:
            module.__cached__ = spec.cached
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            if sys.modules.get(spec.name) is module:
                del sys.modules[spec.name]
            raise
        return module

    def patch(name, module):
        try:
            if not loaded:
                # Found and loaded as an import would (its bytecode cached), but off sys.path.
                spec = path_finder.find_spec("kit_attach_patches", [folder])
                if spec is None:
                    raise ImportError("no kit_attach_patches.py in %s" % folder)
                loaded["module"] = from_spec(spec)
            loaded["module"].patch(name, module)
        except Exception as e:
            sys.stderr.write("kit attach (python): %s is left as it is (%s: %s); it may not reach the world\n" % (name, type(e).__name__, e))

    class KitAttachFinder(object):
        """Finds nothing itself: a watched module is found by the finders after it, and patched once loaded."""

        def find_spec(self, fullname, path=None, target=None):
            # Busy: asked again from inside its own search (another attach's finder, when attaches nest).
            if fullname not in watched or fullname in busy:
                return None
            busy.add(fullname)
            try:
                spec = None
                for finder in sys.meta_path:
                    find = getattr(finder, "find_spec", None)
                    if finder is self or find is None:
                        continue
                    spec = find(fullname, path, target)
                    if spec is not None:
                        break
            finally:
                busy.discard(fullname)
            loader = getattr(spec, "loader", None)
            exec_module = getattr(loader, "exec_module", None)
            if exec_module is None:
                return spec
            own = "exec_module" in getattr(loader, "__dict__", {})

            def exec_and_patch(module):
                # The loader as it was, first: it may load other modules after this one.
                if own:
                    loader.exec_module = exec_module
                else:
                    del loader.exec_module
                exec_module(module)
                if getattr(module, "__name__", None) == fullname:
                    patch(fullname, module)

            try:
                loader.exec_module = exec_and_patch
            except (AttributeError, TypeError):
                sys.stderr.write("kit attach (python): %s is loaded by %s, which kit cannot watch; it may not reach the world\n" % (fullname, type(loader).__name__))
            return spec

    for name in sorted(watched):
        if name in sys.modules:
            patch(name, sys.modules[name])
    sys.meta_path.insert(0, KitAttachFinder())

    # The sitecustomize Python would have run without kit: the next one on sys.path after this folder.
    def same(entry):
        try:
            return os.path.realpath(entry or ".") == here
        except (TypeError, ValueError):
            return False

    at = [i for i, entry in enumerate(sys.path) if same(entry)]
    rest = [entry for entry in (sys.path[at[0] + 1:] if at else sys.path) if not same(entry)]
    spec = path_finder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin is None or os.path.realpath(spec.origin) == os.path.realpath(__file__):
        return
    # It becomes what 'import sitecustomize' answers, as it would have been without kit.
    from_spec(spec)


_kit_attach()
del _kit_attach
`.trimStart();

/** Written as `<temp>/python-attach/kit_attach_patches.py`, beside `world-ca.pem` and the trust files it makes. */
export const PATCHES_PY = String.raw`
# Loaded by the sitecustomize 'kit world attach' wrote (twinkit: sdk/attach/languages/python.ts)
# as kit_attach_patches, the first time the app imports a module below; 'patch(name, module)'
# prepares that module:
#   stripe, httplib2   check certificates against a CA file of their own: it gets the world's CA
#   certifi            where() names a file holding its certificates and the world's CA
#   urllib3            a plain PoolManager sends https through HTTPS_PROXY (NO_PROXY honoured);
#                      a default CA file of its own (Debian's) gets the world's CA
#   aiohttp            a ClientSession honours HTTPS_PROXY and NO_PROXY (trust_env) unless told not to
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
world_ca = []


def say(line):
    try:
        sys.stderr.write("kit attach (python): %s\n" % line)
    except Exception:
        pass


def read_world_ca():
    if not world_ca:
        with open(os.path.join(here, "world-ca.pem"), "rb") as f:
            world_ca.append(f.read().strip())
    return world_ca[0]


def with_world_ca(bundle):
    """A file with the certificates of 'bundle' and the world's CA ('bundle' itself if it has it)."""
    import hashlib
    import tempfile

    key = hashlib.sha256(os.path.realpath(bundle).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    target = os.path.join(here, "trust-%s.pem" % key)
    if os.path.exists(target):
        return target
    ca = read_world_ca()
    with open(bundle, "rb") as f:
        certificates = f.read()
    if ca in certificates:
        return bundle
    # Another process of the app may write the same file at the same time: each writes its own, then renames.
    fd, partial = tempfile.mkstemp(prefix=".trust-", suffix=".pem", dir=here)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(certificates.rstrip() + b"\n" + ca + b"\n")
        os.replace(partial, target)
    except BaseException:
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise
    return target


def with_world_ca_default(function, name):
    """Gives the world's CA to a function's default CA file, the parameter 'name' (when it has one)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return
    if function.__kwdefaults__ and isinstance(function.__kwdefaults__.get(name), str):
        function.__kwdefaults__[name] = with_world_ca(function.__kwdefaults__[name])
        return
    positional = code.co_varnames[: code.co_argcount]
    defaults = list(function.__defaults__ or ())
    at = positional.index(name) - (len(positional) - len(defaults)) if name in positional else -1
    if at >= 0 and isinstance(defaults[at], str):
        defaults[at] = with_world_ca(defaults[at])
        function.__defaults__ = tuple(defaults)


def stripe(module):
    # Read at each request (stripe.ca_bundle_path): an app that sets its own afterwards keeps it.
    path = getattr(module, "ca_bundle_path", None)
    if isinstance(path, str) and path != "":
        module.ca_bundle_path = with_world_ca(path)


def httplib2(module):
    # Read by each Http() made without ca_certs.
    path = getattr(module, "CA_CERTS", None)
    if isinstance(path, str) and path != "":
        module.CA_CERTS = with_world_ca(path)


def certifi(module):
    original = module.where
    found = []

    def where():
        # The file is made at the first call, not at import: many import certifi and never ask.
        if not found:
            try:
                found.append(with_world_ca(original()))
            except Exception as e:
                say("certifi.where() names certifi's own file (%s: %s); it does not hold the world's CA" % (type(e).__name__, e))
                found.append(original())
        return found[0]

    def contents():
        with open(where(), "r", encoding="ascii") as f:
            return f.read()

    for target in (module, sys.modules.get("certifi.core")):
        if target is not None:
            target.where = where
            if hasattr(target, "contents"):
                target.contents = contents


def env_proxy(url):
    """The HTTPS_PROXY an https URL goes through: None when it is unset or NO_PROXY names the host."""
    from urllib.parse import urlsplit
    from urllib.request import getproxies_environment, proxy_bypass_environment

    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except (TypeError, ValueError):
        return None
    if parts.scheme != "https" or not host:
        return None
    proxies = getproxies_environment()
    proxy = proxies.get("https")
    if not proxy or proxy_bypass_environment(host if port is None else "%s:%d" % (host, port), proxies):
        return None
    return proxy


def urllib3(module):
    from urllib.parse import unquote, urlsplit

    pool_manager = module.PoolManager
    original = pool_manager.urlopen

    def through(manager, proxy):
        """The ProxyManager a plain PoolManager sends through 'proxy' with, one per manager and proxy."""
        made = manager.__dict__.setdefault("_kit_attach_proxies", {})
        if proxy not in made:
            parts = urlsplit(proxy)
            headers = None
            if parts.username is not None:
                credentials = "%s:%s" % (unquote(parts.username), unquote(parts.password or ""))
                headers = module.util.make_headers(proxy_basic_auth=credentials)
            bare = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
            made[proxy] = module.ProxyManager(bare, headers=manager.headers, proxy_headers=headers, **manager.connection_pool_kw)
        return made[proxy]

    def urlopen(self, method, url, redirect=True, **kw):
        # A plain PoolManager only: a ProxyManager, a SOCKS one or a subclass has chosen its own way.
        if type(self) is pool_manager:
            proxy = env_proxy(url)
            if proxy is not None:
                return through(self, proxy).urlopen(method, url, redirect=redirect, **kw)
        return original(self, method, url, redirect=redirect, **kw)

    pool_manager.urlopen = urlopen
    # Debian's urllib3 defaults an HTTPSConnectionPool's ca_certs to the system's file, which
    # SSL_CERT_FILE does not replace (urllib3's own default, None, loads the roots it names).
    if os.path.exists(os.path.join(here, "world-ca.pem")):
        pool = getattr(getattr(module, "connectionpool", None), "HTTPSConnectionPool", None)
        with_world_ca_default(getattr(pool, "__init__", None), "ca_certs")


def aiohttp(module):
    session = module.ClientSession
    original = session.__init__

    def __init__(self, *args, **kwargs):
        # trust_env is aiohttp's own switch for HTTPS_PROXY and NO_PROXY; an app that passes it keeps its choice.
        kwargs.setdefault("trust_env", True)
        original(self, *args, **kwargs)

    session.__init__ = __init__


PATCHES = {"stripe": stripe, "httplib2": httplib2, "certifi": certifi, "urllib3": urllib3, "aiohttp": aiohttp}


def patch(name, module):
    PATCHES[name](module)
`.trimStart();
