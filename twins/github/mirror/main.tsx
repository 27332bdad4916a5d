/**
 * The GitHub mirror's entry (bundled by pages/build.mjs into dist/pages/mirrors/github/): the
 * shared page start (config, the browser's session for the world, the sign-in form when there is
 * none), then the mirror. Its CSS goes over the shared look.
 */
import '../../../pages/ui/base.css';
import './app.css';
import { startPage } from '../../../pages/ui/index.js';
import { Mirror } from './app.js';

startPage((page) => <Mirror config={page.config} session={page.session} signOut={page.signOut} />);
