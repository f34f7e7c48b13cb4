# hmsproxy image: the proxy (`hmsproxy serve`), plus a Java 17 runtime so the same image
# can also run a local Hive 2.3 metastore (`hmsproxy dev hms`, from the jars in pyspark's
# wheel) and PySpark clients. See deploy/README.md.
#
#   docker build -t hmsproxy:dev .
#   docker run -v $PWD/my.yml:/etc/hmsproxy/hmsproxy.yml:ro -p 9083:9083 -p 9100:9100 hmsproxy:dev
#
# Ports: 9083 Thrift (server.port), 9100 operations HTTP: /metrics /healthz /readyz (http.port).
# Both are set in the mounted configuration; the image only documents the convention.

# ---- build: a virtualenv with hmsproxy and its dependencies (pyspark, thriftpy2, ...) ----
FROM python:3.11.13-slim-bookworm AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# gcc: hmsproxy.protocol._thriftwalk (setup.py), the relay's C walker; the runtime stage needs no compiler.
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends gcc libc6-dev; \
    rm -rf /var/lib/apt/lists/*; \
    python -m venv /opt/hmsproxy/venv

WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY hmsproxy ./hmsproxy
RUN /opt/hmsproxy/venv/bin/pip install . \
    && /opt/hmsproxy/venv/bin/python -c "import hmsproxy.protocol._thriftwalk" \
    && /opt/hmsproxy/venv/bin/hmsproxy --version

# ---- runtime: slim Python + headless JRE 17 + the virtualenv, as a non-root user ----
FROM python:3.11.13-slim-bookworm

# openjdk-17-jre-headless: `hmsproxy dev hms` runs the metastore JVM, and PySpark its driver.
# (The man1 directory works around the JRE's postinst on slim images.)
RUN set -eux; \
    mkdir -p /usr/share/man/man1; \
    apt-get update; \
    apt-get install -y --no-install-recommends openjdk-17-jre-headless; \
    rm -rf /var/lib/apt/lists/*; \
    java -version

# A fixed numeric uid/gid, so Kubernetes' runAsNonRoot can verify it.
# /data is where `hmsproxy dev hms --state-dir /data` keeps Derby and the warehouse;
# named volumes mounted there inherit this ownership.
RUN set -eux; \
    groupadd --gid 10001 hmsproxy; \
    useradd --uid 10001 --gid 10001 --home-dir /home/hmsproxy --create-home \
        --shell /usr/sbin/nologin hmsproxy; \
    mkdir -p /etc/hmsproxy /data/warehouse; \
    chown -R 10001:10001 /data

COPY --from=build /opt/hmsproxy/venv /opt/hmsproxy/venv
COPY config/hmsproxy.example.yml /etc/hmsproxy/hmsproxy.example.yml

ENV PATH=/opt/hmsproxy/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

USER 10001:10001
WORKDIR /home/hmsproxy

EXPOSE 9083 9100

# Liveness of the proxy on its operations port (http.port: 9100). Services that run other
# commands from this image (dev hms, PySpark) override or disable it.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9100/healthz', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["hmsproxy"]
CMD ["serve", "--config", "/etc/hmsproxy/hmsproxy.yml"]
