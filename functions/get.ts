// GET /api/{username}/{projectSlug}/content[?path=a.b][&shallow=true[&limit=n&after=c] | &start=n&limit=n]
import { contentRead } from '../lib/http/content-read';
import { validateReadQuery as validate } from '../lib/http/validators.generated';

export const handler = contentRead(validate);
