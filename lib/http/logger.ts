// Logging: one structured JSON line per event; never the Authorization header or any secret.

type Fields = Record<string, unknown> & { error?: unknown };

function serialise(fields: Fields): Record<string, unknown> {
  const { error, ...rest } = fields;
  if (error instanceof Error) {
    return { ...rest, error: { name: error.name, message: error.message, stack: error.stack } };
  }
  return error === undefined ? rest : { ...rest, error: String(error) };
}

export const logger = {
  error(message: string, fields: Fields = {}): void {
    console.error(JSON.stringify({ level: 'ERROR', message, timestamp: new Date().toISOString(), ...serialise(fields) }));
  },
};
