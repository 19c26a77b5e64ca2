export { compareSourceDates, fromDateParts, parseSourceDate } from './dates.ts';
export {
  type ImportRow,
  UPDATE_FORMATS,
  UpdateFormat,
  UpdateObject,
  updateIdentity,
  type WorkUpdate,
} from './update-record.ts';
