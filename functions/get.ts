// GET /api/{username}/{projectSlug}/content[?path=a.b]
import { contentRead } from '../lib/http/content-read';

export const handler = contentRead();
