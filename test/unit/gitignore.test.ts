// Files the tools write into the checkout that must never be committed (issue 28: the packed client tarball was not
// ignored).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The file `npm pack` writes for a package: its name without `@`, `/` as `-`, then the version. */
const tarballOf = (dir: string) => {
  const { name, version } = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')) as {
    name: string;
    version: string;
  };
  return `${dir}/${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
};

it.each(['client', '.'])('the tarball `npm pack` writes in %s is ignored by git', (dir) => {
  const file = tarballOf(dir);
  // Exit status 0 (and the path printed) when ignored; 1 when not.
  expect(execFileSync('git', ['check-ignore', '--no-index', file], { encoding: 'utf8' }).trim()).toBe(file);
});
