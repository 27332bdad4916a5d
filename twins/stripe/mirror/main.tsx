/** The Stripe mirror's entry (built by pages/build.mjs into dist/pages/mirrors/stripe/). */
import '../../../pages/ui/base.css';
import './app.css';
import { startPage } from '../../../pages/ui/index.js';
import { StripeMirror } from './mirror.js';

startPage((page) => <StripeMirror {...page} />);
