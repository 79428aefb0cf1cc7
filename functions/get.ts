// GET /api/{username}/{projectSlug}/content[?path=a.b]
import { contentRead } from '../lib/http/content-handlers';

export const handler = contentRead();
