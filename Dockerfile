# Switchboard as an OpenEnv environment server (see openenv.yaml and README "Trainers").
#   docker build -t switchboard-env .
#   docker run -p 8000:8000 -e SWITCHBOARD_SERVE_TOKEN=s3cret switchboard-env
# Settings (environment variables): SWITCHBOARD_DOMAIN (default carrier; tau2-airline /
# tau2-retail need SWITCHBOARD_DATA, a tau2-bench domain folder mounted into the container),
# SWITCHBOARD_SERVE_TOKEN (bearer token; strongly advised since the container listens on all
# interfaces), SWITCHBOARD_SERVE_ARGS (more `serve` options, e.g. "--preset regular --allow-host my.space.host").
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends espeak-ng ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# sql.js is installed from the repository's own build (vendor/sql.js: the write log in C).
COPY vendor ./vendor
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY domains ./domains
COPY models ./models
ENV SWITCHBOARD_DOMAIN=carrier \
    SWITCHBOARD_DATA= \
    SWITCHBOARD_SERVE_ARGS=
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:8000/health',{headers:process.env.SWITCHBOARD_SERVE_TOKEN?{authorization:'Bearer '+process.env.SWITCHBOARD_SERVE_TOKEN}:{}}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["sh", "-c", "exec node bin/switchboard.mjs serve --protocol openenv --domain \"$SWITCHBOARD_DOMAIN\" ${SWITCHBOARD_DATA:+--data \"$SWITCHBOARD_DATA\"} --host 0.0.0.0 --port 8000 $SWITCHBOARD_SERVE_ARGS"]
