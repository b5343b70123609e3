# The MongoDB deployment's image (docker-compose.yml): no embedded server (the `embedded` extra,
# GPL-2.0 SecantusDB, is left out), so MONGODB_URI must be set.
FROM python:3.11-slim
WORKDIR /srv/fincap
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu \
 && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md LICENSE ./
COPY app ./app
COPY schema ./schema
COPY resolvers ./resolvers
COPY persistence ./persistence
COPY engines ./engines
# The embedding model: one pinned file, checked by sha256, into /usr/local/share/fincap/models.
RUN pip install --no-cache-dir . \
 && python -m engines.ranking.model_store
ENV FINCAP_DATA_DIR=/data
EXPOSE 8000
CMD ["fincap", "serve", "--host", "0.0.0.0", "--port", "8000"]
