"""The PostgreSQL backend: connections (db), SQL translation from the SQLite dialect (translate),
full-text and vector search (search), shared DDL (ddl), an embedded server for tests (server)."""
