// CORS origins for the HTTP API from CORS_ORIGINS at deploy time (comma-separated; '*' when unset or empty), the
// same variable `npm start` reads. serverless.yml: allowedOrigins: ${file(./infra/cors-origins.cjs)}
module.exports = () =>
  (process.env.CORS_ORIGINS || '*')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
