# hmsproxy image: the proxy (`hmsproxy serve`), plus a Java 17 runtime so the same image
# can also run a local Hive 2.3 metastore (`hmsproxy dev hms`, from the jars in pyspark's
# wheel) and PySpark clients. See deploy/README.md.
#
#   docker build -t hmsproxy:dev .                                   # full: hmsproxy[spark] + Java
#   docker build --build-arg EXTRAS= -t hmsproxy:proxy .             # the proxy alone: no pyspark, no Java
#   docker run -v $PWD/my.yml:/etc/hmsproxy/hmsproxy.yml:ro -p 9083:9083 -p 9100:9100 hmsproxy:dev
#
# BASE_IMAGE may be any Debian bookworm image: the official Python image (the default) brings
# its own Python 3.11 in /usr/local, any other base gets bookworm's python3 (also 3.11); where
# no registry is reachable, deploy/local/images.sh makes one with debootstrap.
#
# Ports: 9083 Thrift (server.port), 9100 operations HTTP: /metrics /healthz /readyz (http.port).
# Both are set in the mounted configuration; the image only documents the convention.
ARG BASE_IMAGE=python:3.11.13-slim-bookworm

# ---- python: the base with a Python 3.11 interpreter and venv ----
FROM ${BASE_IMAGE} AS python
RUN set -eux; \
    if ! command -v python3 >/dev/null; then \
        apt-get update; \
        apt-get install -y --no-install-recommends python3 python3-venv; \
        rm -rf /var/lib/apt/lists/*; \
    fi; \
    python3 -c "import sys, venv; assert sys.version_info[:2] == (3, 11), sys.version"

# ---- package: hmsproxy's wheel, installed into the virtualenv's paths under the root /pkg ----
# Apart from the dependencies and EXTRAS, so both images share it (the second build finds it
# cached), and small, so a change of the source copies little (with the vfs storage driver every
# step copies its stage's whole file system).
FROM python AS package
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# gcc: hmsproxy.protocol._thriftwalk (setup.py), the relay's C walker; the runtime stage needs no
# compiler. Python's headers come with the official image, and from python3-dev elsewhere. The
# venv sits where the runtime's does: the `hmsproxy` script's #! line names its python.
RUN set -eux; \
    apt-get update; \
    headers=$(python3 -c "import sysconfig, os; print('' if os.path.exists(sysconfig.get_path('include') + '/Python.h') else 'python3-dev')"); \
    apt-get install -y --no-install-recommends gcc libc6-dev $headers; \
    rm -rf /var/lib/apt/lists/*; \
    python3 -m venv /opt/hmsproxy/venv

WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY hmsproxy ./hmsproxy
# The C walker is optional in setup.py (a build without a compiler still installs): the import
# makes a wheel without it fail the build (from /, where the source's hmsproxy/ cannot shadow it).
RUN /opt/hmsproxy/venv/bin/pip wheel --no-deps --wheel-dir /tmp/wheels . \
    && /opt/hmsproxy/venv/bin/pip install --no-deps --no-index --no-warn-script-location --root /pkg /tmp/wheels/hmsproxy-*.whl \
    && cd / && PYTHONPATH=/pkg$(/opt/hmsproxy/venv/bin/python -c "import sysconfig; print(sysconfig.get_path('platlib'))") \
        /opt/hmsproxy/venv/bin/python -c "import hmsproxy.protocol._thriftwalk"

# ---- runtime: Python + headless JRE 17 (with spark) + the virtualenv, as a non-root user ----
FROM python
ARG EXTRAS=spark

# openjdk-17-jre-headless: `hmsproxy dev hms` runs the metastore JVM, and PySpark its driver; a
# proxy-only image (no spark extra) runs neither. (The man1 directory works around the JRE's
# postinst on slim images.)
# A fixed numeric uid/gid, so Kubernetes' runAsNonRoot can verify it.
# /data is where `hmsproxy dev hms --state-dir /data` keeps Derby and the warehouse;
# named volumes mounted there inherit this ownership.
RUN set -eux; \
    case ",$EXTRAS," in *,spark,*) \
        mkdir -p /usr/share/man/man1; \
        apt-get update; \
        apt-get install -y --no-install-recommends openjdk-17-jre-headless; \
        rm -rf /var/lib/apt/lists/*; \
        java -version;; \
    esac; \
    groupadd --gid 10001 hmsproxy; \
    useradd --uid 10001 --gid 10001 --home-dir /home/hmsproxy --create-home \
        --shell /usr/sbin/nologin hmsproxy; \
    mkdir -p /etc/hmsproxy /data/warehouse; \
    chown -R 10001:10001 /data

# The image's settings come before the package: every step after a changed one is redone (and
# with the vfs storage driver each step copies the whole file system), so a change of the source
# redoes only the last one.
ENV PATH=/opt/hmsproxy/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /home/hmsproxy
EXPOSE 9083 9100

# Liveness of the proxy on its operations port (http.port: 9100). Services that run other
# commands from this image (dev hms, PySpark) override or disable it.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9100/healthz', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["hmsproxy"]
CMD ["serve", "--config", "/etc/hmsproxy/hmsproxy.yml"]

COPY config/hmsproxy.example.yml /etc/hmsproxy/hmsproxy.example.yml
# The dependencies, from pyproject.toml alone: a cached layer while it is unchanged, found by its
# command (a COPY of a built venv from another stage would hash the whole venv on every build).
# They come as wheels (pyspark, pyarrow, thriftpy2, psycopg2-binary, ...): no compiler here.
COPY pyproject.toml /opt/hmsproxy/pyproject.toml
RUN set -eux; \
    python3 -m venv /opt/hmsproxy/venv; \
    python3 -c "import sys, tomllib; p = tomllib.load(open('/opt/hmsproxy/pyproject.toml', 'rb'))['project']; \
extras = [e for e in sys.argv[1].split(',') if e]; \
print('\n'.join(p['dependencies'] + [d for e in extras for d in p['optional-dependencies'][e]]))" "$EXTRAS" > /tmp/requirements.txt; \
    PIP_DISABLE_PIP_VERSION_CHECK=1 /opt/hmsproxy/venv/bin/pip install --no-cache-dir -r /tmp/requirements.txt; \
    rm /tmp/requirements.txt
# Then the package, installed in the package stage and copied as root-owned files: the one step a
# change of the source redoes here (a RUN would need root, and USER after it a step of its own).
USER 10001:10001
COPY --from=package /pkg/opt/hmsproxy/venv/ /opt/hmsproxy/venv/
